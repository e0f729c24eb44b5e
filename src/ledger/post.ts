import { randomUUID } from "node:crypto";
import type { Decimal } from "decimal.js";
import type { Sql } from "../db/sql.js";
import { AppError } from "../errors.js";
import type { AccountIds } from "./account-ids.js";
import { Exact } from "./amount.js";
import { entryHash } from "./hash.js";
import { accountKeys, keyOf, lockAccounts, USER, type LockedAccount } from "./lock.js";
import { houseShardOf } from "./shards.js";
import type { JournalInput } from "./types.js";
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

/** Every posting of the journal becomes an entry extending its (locked, in-memory) account's chain. */
function entriesOf(row: JournalRow, journal: JournalInput, shard: number, accounts: Map<string, LockedAccount>): EntryRow[] {
  return journal.postings.map((posting) => {
    const account = accounts.get(keyOf(posting.account, shard))!;
    const balanceBefore = new Exact(account.balance);
    const balanceAfter = balanceBefore.plus(posting.amount);
    if (account.code === USER && balanceAfter.isNegative()) {
      throw new AppError("INSUFFICIENT_FUNDS", "Insufficient funds", {
        details: `${posting.account.currency} balance ${balanceBefore.toFixed()} is less than ${posting.amount.negated().toFixed()}`,
      });
    }
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

/**
 * Writes balanced journals of one client, in order, inside the caller's transaction: every posting
 * becomes an entry that extends its account's chain (sequence, balanceBefore → balanceAfter, hash of
 * the previous entry). All their accounts are locked in one statement and everything is written in
 * one more. A user balance that would go below zero refuses them all with INSUFFICIENT_FUNDS.
 */
export async function postJournals(tx: Sql, journals: JournalInput[], known: AccountIds, houseShards: number) {
  const clientId = journals[0].clientId;
  if (journals.some((journal) => journal.clientId !== clientId)) throw new Error("Journals posted together belong to one client");
  journals.forEach(assertBalanced);
  const shards = journals.map((journal) => houseShardOf(journal, houseShards));
  const keys = accountKeys(journals.flatMap((journal, i) => journal.postings.map((posting) => ({ account: posting.account, shard: shards[i] }))));
  const accounts = await lockAccounts(tx, clientId, keys, known);
  const createdAt = new Date();
  const rows = journals.map((journal) => ({ id: randomUUID(), clientId, type: journal.type, referenceId: journal.referenceId ?? null, createdAt }));
  const entries = rows.map((row, i) => entriesOf(row, journals[i], shards[i], accounts));
  await writeJournals(tx, rows, entries.flat(), [...accounts.values()]);
  return rows.map((row, i) => ({ journalId: row.id, entries: entries[i] }));
}
