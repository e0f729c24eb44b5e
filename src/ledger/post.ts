import { randomUUID } from "node:crypto";
import { Decimal } from "decimal.js";
import type { Tx } from "../db/transaction.js";
import { AppError } from "../errors.js";
import { entryHash } from "./hash.js";
import type { AccountRef, JournalInput } from "./types.js";

type LockedAccount = { id: string; code: string; currency: string; balance: string; entryCount: number; lastEntryHash: string | null };

const USER = "USER";
const keyOf = (ref: AccountRef) => ("userId" in ref ? `${USER}:${ref.userId}:${ref.currency}` : `${ref.system}::${ref.currency}`);

function assertBalanced(journal: JournalInput) {
  if (journal.postings.length < 2) throw new Error("A journal needs at least two postings");
  const sums = new Map<string, Decimal>();
  for (const posting of journal.postings) {
    if (posting.amount.isZero() || !posting.amount.isFinite()) throw new Error("A posting amount must be non-zero and finite");
    const currency = posting.account.currency;
    sums.set(currency, (sums.get(currency) ?? new Decimal(0)).plus(posting.amount));
  }
  for (const [currency, sum] of sums) {
    if (!sum.isZero()) throw new Error(`Unbalanced journal: ${currency} postings sum to ${sum.toFixed()}`);
  }
}

/** Creates missing balance accounts, then locks every account of the journal, always in id order. */
async function lockAccounts(tx: Tx, clientId: string, refs: AccountRef[]): Promise<Map<string, LockedAccount>> {
  const ids = new Map<string, string>();
  for (const ref of refs) {
    const key = keyOf(ref);
    if (ids.has(key)) continue;
    const userId = "userId" in ref ? ref.userId : null;
    const code = "userId" in ref ? USER : ref.system;
    await tx.$executeRaw`
      INSERT INTO "ledger_accounts" ("id", "clientId", "userId", "code", "currency")
      VALUES (${randomUUID()}::uuid, ${clientId}::uuid, ${userId}::uuid, ${code}, ${ref.currency})
      ON CONFLICT DO NOTHING`;
    const account = await tx.ledgerAccount.findFirstOrThrow({ where: { clientId, userId, code, currency: ref.currency }, select: { id: true } });
    ids.set(key, account.id);
  }
  // Row locks taken in one statement and one global order: two journals never wait on each other in a cycle.
  const rows = await tx.$queryRaw<LockedAccount[]>`
    SELECT "id", "code", "currency", "balance"::text AS "balance", "entryCount", "lastEntryHash"
    FROM "ledger_accounts" WHERE "id" = ANY(${[...ids.values()]}::uuid[]) ORDER BY "id" FOR UPDATE`;
  const byId = new Map(rows.map((row) => [row.id, row]));
  return new Map([...ids].map(([key, id]) => [key, byId.get(id)!]));
}

/**
 * Writes one balanced journal inside the caller's transaction: every posting becomes an entry that
 * extends its account's chain (sequence, balanceBefore → balanceAfter, hash of the previous entry).
 * A user balance that would go below zero refuses the whole journal with INSUFFICIENT_FUNDS.
 */
export async function postJournal(tx: Tx, journal: JournalInput) {
  assertBalanced(journal);
  const accounts = await lockAccounts(tx, journal.clientId, journal.postings.map((p) => p.account));
  const journalId = randomUUID();
  const createdAt = new Date();
  await tx.ledgerJournal.create({
    data: { id: journalId, clientId: journal.clientId, type: journal.type, referenceId: journal.referenceId ?? null, createdAt },
  });
  const entries = journal.postings.map((posting) => {
    const account = accounts.get(keyOf(posting.account))!;
    const balanceBefore = new Decimal(account.balance);
    const balanceAfter = balanceBefore.plus(posting.amount);
    if (account.code === USER && balanceAfter.isNegative()) {
      throw new AppError("INSUFFICIENT_FUNDS", "Insufficient funds", {
        details: `${posting.account.currency} balance ${balanceBefore.toFixed()} is less than ${posting.amount.negated().toFixed()}`,
      });
    }
    const content = {
      accountId: account.id,
      journalId,
      sequence: account.entryCount + 1,
      type: posting.type,
      currency: posting.account.currency,
      amount: posting.amount.toFixed(),
      balanceBefore: balanceBefore.toFixed(),
      balanceAfter: balanceAfter.toFixed(),
      referenceId: journal.referenceId ?? null,
      createdAt,
    };
    const hash = entryHash(account.lastEntryHash, content);
    const entry = {
      id: randomUUID(),
      ...content,
      clientId: journal.clientId,
      userId: "userId" in posting.account ? posting.account.userId : null,
      prevHash: account.lastEntryHash,
      hash,
    };
    account.balance = entry.balanceAfter;
    account.entryCount = entry.sequence;
    account.lastEntryHash = hash;
    return entry;
  });
  await tx.ledgerEntry.createMany({ data: entries });
  for (const account of new Set(accounts.values())) {
    await tx.ledgerAccount.update({
      where: { id: account.id },
      data: { balance: account.balance, entryCount: account.entryCount, lastEntryHash: account.lastEntryHash },
    });
  }
  return { journalId, entries };
}
