import { randomUUID } from "node:crypto";
import type { Decimal } from "decimal.js";
import type { Tx } from "../db/transaction.js";
import { AppError } from "../errors.js";
import { Exact } from "./amount.js";
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
    sums.set(currency, (sums.get(currency) ?? new Exact(0)).plus(posting.amount));
  }
  for (const [currency, sum] of sums) {
    if (!sum.isZero()) throw new Error(`Unbalanced journal: ${currency} postings sum to ${sum.toFixed()}`);
  }
}

type AccountKey = { key: string; userId: string | null; code: string; currency: string };

function accountKeys(refs: AccountRef[]): AccountKey[] {
  const keys = new Map<string, AccountKey>();
  for (const ref of refs) {
    const key = keyOf(ref);
    if ("userId" in ref) keys.set(key, { key, userId: ref.userId, code: USER, currency: ref.currency });
    else keys.set(key, { key, userId: null, code: ref.system, currency: ref.currency });
  }
  // One global order for creating accounts too: two journals opening the same new accounts never wait in a cycle.
  return [...keys.values()].sort((a, b) => (a.key < b.key ? -1 : 1));
}

/** The ids of the journal's accounts that exist (one read, no lock; it may return a few other accounts of the same users). */
async function findAccountIds(tx: Tx, clientId: string, keys: AccountKey[]): Promise<Map<string, string>> {
  const userIds = [...new Set(keys.flatMap((k) => (k.userId ? [k.userId] : [])))];
  const systemCodes = [...new Set(keys.flatMap((k) => (k.userId ? [] : [k.code])))];
  const rows = await tx.$queryRaw<{ id: string; userId: string | null; code: string; currency: string }[]>`
    SELECT "id", "userId", "code", "currency" FROM "ledger_accounts"
    WHERE "clientId" = ${clientId}::uuid AND "currency" = ANY(${[...new Set(keys.map((k) => k.currency))]}::text[])
      AND (("userId" = ANY(${userIds}::uuid[]) AND "code" = ${USER}) OR ("userId" IS NULL AND "code" = ANY(${systemCodes}::text[])))`;
  const ids = new Map<string, string>();
  for (const row of rows) {
    ids.set(row.userId ? `${USER}:${row.userId}:${row.currency}` : `${row.code}::${row.currency}`, row.id);
  }
  return ids;
}

/**
 * Creates missing balance accounts (before any row lock is held), then locks every account of the
 * journal, in id order, in one statement.
 */
async function lockAccounts(tx: Tx, clientId: string, refs: AccountRef[]): Promise<Map<string, LockedAccount>> {
  const keys = accountKeys(refs);
  let ids = await findAccountIds(tx, clientId, keys);
  const missing = keys.filter((k) => !ids.has(k.key));
  if (missing.length) {
    for (const account of missing) {
      await tx.$executeRaw`
        INSERT INTO "ledger_accounts" ("id", "clientId", "userId", "code", "currency")
        VALUES (${randomUUID()}::uuid, ${clientId}::uuid, ${account.userId}::uuid, ${account.code}, ${account.currency})
        ON CONFLICT DO NOTHING`;
    }
    ids = await findAccountIds(tx, clientId, keys);
  }
  // Row locks taken in one statement and one global order: two journals never wait on each other in a cycle.
  const rows = await tx.$queryRaw<LockedAccount[]>`
    SELECT "id", "code", "currency", "balance"::text AS "balance", "entryCount", "lastEntryHash"
    FROM "ledger_accounts" WHERE "id" = ANY(${keys.map((k) => ids.get(k.key)!)}::uuid[]) ORDER BY "id" FOR UPDATE`;
  const byId = new Map(rows.map((row) => [row.id, row]));
  return new Map(keys.map((k) => [k.key, byId.get(ids.get(k.key)!)!]));
}

type EntryRow = {
  id: string;
  accountId: string;
  userId: string | null;
  sequence: number;
  type: string;
  currency: string;
  amount: string;
  balanceBefore: string;
  balanceAfter: string;
  prevHash: string | null;
  hash: string;
};
type JournalRow = { id: string; clientId: string; type: string; referenceId: string | null; createdAt: Date };

/** The journal and all its entries in one statement (the money path runs this for every movement). */
function insertJournal(tx: Tx, journal: JournalRow, entries: EntryRow[]) {
  const column = <K extends keyof EntryRow>(key: K) => entries.map((entry) => entry[key]);
  return tx.$executeRaw`
    WITH "journal" AS (
      INSERT INTO "ledger_journals" ("id", "clientId", "type", "referenceId", "createdAt")
      VALUES (${journal.id}::uuid, ${journal.clientId}::uuid, ${journal.type}, ${journal.referenceId}, ${journal.createdAt})
    )
    INSERT INTO "ledger_entries" ("id", "journalId", "accountId", "clientId", "userId", "sequence", "type", "currency",
                                  "amount", "balanceBefore", "balanceAfter", "referenceId", "prevHash", "hash", "createdAt")
    SELECT e."id", ${journal.id}::uuid, e."accountId", ${journal.clientId}::uuid, e."userId", e."sequence", e."type", e."currency",
           e."amount"::numeric, e."balanceBefore"::numeric, e."balanceAfter"::numeric, ${journal.referenceId}, e."prevHash", e."hash",
           ${journal.createdAt}
    FROM unnest(${column("id")}::uuid[], ${column("accountId")}::uuid[], ${column("userId")}::uuid[], ${column("sequence")}::int[],
                ${column("type")}::text[], ${column("currency")}::text[], ${column("amount")}::text[], ${column("balanceBefore")}::text[],
                ${column("balanceAfter")}::text[], ${column("prevHash")}::text[], ${column("hash")}::text[])
      AS e("id", "accountId", "userId", "sequence", "type", "currency", "amount", "balanceBefore", "balanceAfter", "prevHash", "hash")`;
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
  const entries = journal.postings.map((posting) => {
    const account = accounts.get(keyOf(posting.account))!;
    const balanceBefore = new Exact(account.balance);
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
  await insertJournal(tx, { id: journalId, clientId: journal.clientId, type: journal.type, referenceId: journal.referenceId ?? null, createdAt }, entries);
  const touched = [...accounts.values()];
  await tx.$executeRaw`
    UPDATE "ledger_accounts" AS a SET "balance" = u."balance"::numeric, "entryCount" = u."entryCount", "lastEntryHash" = u."lastEntryHash"
    FROM unnest(${touched.map((a) => a.id)}::uuid[], ${touched.map((a) => a.balance)}::text[], ${touched.map((a) => a.entryCount)}::int[],
                ${touched.map((a) => a.lastEntryHash)}::text[]) AS u("id", "balance", "entryCount", "lastEntryHash")
    WHERE a."id" = u."id"`;
  return { journalId, entries };
}
