import { randomUUID } from "node:crypto";
import type { Decimal } from "decimal.js";
import type { Sql } from "../db/sql.js";
import { AppError } from "../errors.js";
import type { AccountIds } from "./account-ids.js";
import { Exact } from "../money/amount.js";
import { entryHash } from "./hash.js";
import { accountKeys, keyOf, lockAccounts, USER, type LockedAccount } from "./lock.js";
import { houseShardOf } from "./shards.js";
import type { HoldChange, JournalInput } from "./types.js";
import { writeJournals, type EntryRow, type JournalRow } from "./write.js";

function assertBalanced(journal: JournalInput) {
  if (journal.postings.length < 2) throw new Error("A journal needs at least two postings");
  const sums = new Map<string, Decimal>();
  for (const posting of journal.postings) {
    if (posting.amount.isZero() || !posting.amount.isFinite()) throw new Error("A posting amount must be non-zero and finite");
    const currency = posting.account.currency;
    sums.set(currency, (sums.get(currency) ?? new Exact(0)).plus(posting.amount));
  }
  for (const [currency, sum] of sums) {
    if (!sum.isZero()) throw new Error(`Unbalanced journal: ${currency} postings sum to ${sum.toFixed()}`);
  }
}

/**
 * The funds rule, the one check of every spend (withdrawal, conversion, card debit, card
 * authorization): a user account never gives or holds more than it has, so its balance never falls
 * below what it holds: available = balance − held ≥ 0. It runs on the locked row, before the change.
 */
function requireAvailable(account: LockedAccount, currency: string, spend: Decimal) {
  if (account.code !== USER) return;
  const balance = new Exact(account.balance);
  const held = new Exact(account.held);
  const available = balance.minus(held);
  if (available.greaterThanOrEqualTo(spend)) return;
  throw new AppError("INSUFFICIENT_FUNDS", "Insufficient funds", {
    details: held.isZero()
      ? `${currency} balance ${balance.toFixed()} is less than ${spend.toFixed()}`
      : `${currency} available balance ${available.toFixed()} (balance ${balance.toFixed()}, held ${held.toFixed()}) is less than ${spend.toFixed()}`,
  });
}

/** Every posting of the journal becomes an entry extending its (locked, in-memory) account's chain. */
function entriesOf(row: JournalRow, journal: JournalInput, shard: number, accounts: Map<string, LockedAccount>): EntryRow[] {
  return journal.postings.map((posting) => {
    const account = accounts.get(keyOf(posting.account, shard))!;
    if (posting.amount.isNegative()) requireAvailable(account, posting.account.currency, posting.amount.negated());
    const balanceBefore = new Exact(account.balance);
    const balanceAfter = balanceBefore.plus(posting.amount);
    const content = {
      accountId: account.id,
      journalId: row.id,
      sequence: account.entryCount + 1,
      type: posting.type,
      currency: posting.account.currency,
      amount: posting.amount.toFixed(),
      balanceBefore: balanceBefore.toFixed(),
      balanceAfter: balanceAfter.toFixed(),
      referenceId: row.referenceId,
      createdAt: row.createdAt,
    };
    const hash = entryHash(account.lastEntryHash, content);
    const entry = { id: randomUUID(), ...content, clientId: row.clientId, userId: "userId" in posting.account ? posting.account.userId : null, prevHash: account.lastEntryHash, hash };
    account.balance = entry.balanceAfter;
    account.entryCount = entry.sequence;
    account.lastEntryHash = hash;
    return entry;
  });
}

function assertHoldChange(change: HoldChange) {
  if (change.amount.isZero() || !change.amount.isFinite()) throw new Error("A hold change must be non-zero and finite");
}

/** Places (amount > 0, under the funds rule) or releases (amount < 0) a hold on the locked account. */
function changeHold(account: LockedAccount, change: HoldChange) {
  if (change.amount.isPositive()) requireAvailable(account, change.currency, change.amount);
  const held = new Exact(account.held).plus(change.amount);
  if (held.isNegative()) throw new Error(`Releasing ${change.amount.negated().toFixed()} ${change.currency} when ${account.held} is held`);
  account.held = held.toFixed();
}

/**
 * Writes balanced journals of one client, in order, and changes what user accounts hold, inside the
 * caller's transaction: every posting becomes an entry that extends its account's chain (sequence,
 * balanceBefore → balanceAfter, hash of the previous entry). All their accounts are locked in one
 * statement and everything is written in one more. Releases apply first, then the journals, then
 * new holds; a debit or a hold beyond what is available refuses them all with INSUFFICIENT_FUNDS.
 */
export async function postJournals(tx: Sql, clientId: string, journals: JournalInput[], holds: HoldChange[], known: AccountIds, houseShards: number) {
  if (journals.some((journal) => journal.clientId !== clientId)) throw new Error("Journals posted together belong to one client");
  journals.forEach(assertBalanced);
  holds.forEach(assertHoldChange);
  const shards = journals.map((journal) => houseShardOf(journal, houseShards));
  const keys = accountKeys([
    ...journals.flatMap((journal, i) => journal.postings.map((posting) => ({ account: posting.account, shard: shards[i] }))),
    ...holds.map(({ userId, currency }) => ({ account: { userId, currency }, shard: 0 })),
  ]);
  const accounts = await lockAccounts(tx, clientId, keys, known);
  const holdOf = (change: HoldChange) => accounts.get(keyOf({ userId: change.userId, currency: change.currency }, 0))!;
  for (const release of holds.filter((change) => change.amount.isNegative())) changeHold(holdOf(release), release);
  const createdAt = new Date();
  const rows = journals.map((journal) => ({ id: randomUUID(), clientId, type: journal.type, referenceId: journal.referenceId ?? null, createdAt }));
  const entries = rows.map((row, i) => entriesOf(row, journals[i], shards[i], accounts));
  for (const placement of holds.filter((change) => change.amount.isPositive())) changeHold(holdOf(placement), placement);
  await writeJournals(tx, rows, entries.flat(), [...accounts.values()]);
  return rows.map((row, i) => ({ journalId: row.id, entries: entries[i] }));
}
