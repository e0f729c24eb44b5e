import { randomUUID } from "node:crypto";
import type { Decimal } from "decimal.js";
import type { Tx } from "../db/transaction.js";
import { AppError } from "../errors.js";
import { Exact } from "./amount.js";
import { entryHash } from "./hash.js";
import type { AccountIds } from "./account-ids.js";
import { houseShardOf } from "./shards.js";
import type { AccountRef, JournalInput } from "./types.js";

type LockedAccount = { id: string; code: string; currency: string; balance: string; entryCount: number; lastEntryHash: string | null };

const USER = "USER";

type AccountKey = { key: string; userId: string | null; code: string; currency: string; shard: number };

const userKey = (userId: string, currency: string) => `${USER}:${userId}:${currency}`;
const systemKey = (code: string, shard: number, currency: string) => `${code}#${shard}:${currency}`;
const keyOf = (ref: AccountRef, shard: number) => ("userId" in ref ? userKey(ref.userId, ref.currency) : systemKey(ref.system, shard, ref.currency));

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

function accountKeys(refs: AccountRef[], shard: number): AccountKey[] {
  const keys = new Map<string, AccountKey>();
  for (const ref of refs) {
    const key = keyOf(ref, shard);
    if ("userId" in ref) keys.set(key, { key, userId: ref.userId, code: USER, currency: ref.currency, shard: 0 });
    else keys.set(key, { key, userId: null, code: ref.system, currency: ref.currency, shard });
  }
  // One global order for creating accounts too: two journals opening the same new accounts never wait in a cycle.
  return [...keys.values()].sort((a, b) => (a.key < b.key ? -1 : 1));
}

/** The ids of the journal's accounts that exist (one read, no lock; it may return a few other accounts of the same users). */
async function findAccountIds(tx: Tx, clientId: string, keys: AccountKey[]): Promise<Map<string, string>> {
  const userIds = [...new Set(keys.flatMap((k) => (k.userId ? [k.userId] : [])))];
  const systemCodes = [...new Set(keys.flatMap((k) => (k.userId ? [] : [k.code])))];
  const shards = [...new Set(keys.map((k) => k.shard))];
  const rows = await tx.$queryRaw<{ id: string; userId: string | null; code: string; currency: string; shard: number }[]>`
    SELECT "id", "userId", "code", "currency", "shard" FROM "ledger_accounts"
    WHERE "clientId" = ${clientId}::uuid AND "currency" = ANY(${[...new Set(keys.map((k) => k.currency))]}::text[])
      AND (("userId" = ANY(${userIds}::uuid[]) AND "code" = ${USER})
           OR ("userId" IS NULL AND "code" = ANY(${systemCodes}::text[]) AND "shard" = ANY(${shards}::int[])))`;
  return new Map(rows.map((row) => [row.userId ? userKey(row.userId, row.currency) : systemKey(row.code, row.shard, row.currency), row.id]));
}

/** Row locks taken in one statement and one global order (ids): two journals never wait on each other in a cycle. */
const lockByIds = (tx: Tx, ids: string[]) => tx.$queryRaw<LockedAccount[]>`
  SELECT "id", "code", "currency", "balance"::text AS "balance", "entryCount", "lastEntryHash"
  FROM "ledger_accounts" WHERE "id" = ANY(${ids}::uuid[]) ORDER BY "id" FOR UPDATE`;

const byKey = (keys: AccountKey[], ids: (key: AccountKey) => string, rows: LockedAccount[]) => {
  const byId = new Map(rows.map((row) => [row.id, row]));
  return new Map(keys.map((k) => [k.key, byId.get(ids(k))!]));
};

/**
 * Locks every account of the journal, in id order, in one statement. Accounts whose ids this
 * process knows are locked straight away; otherwise their ids are read and missing accounts
 * created first, before any row lock is held (except after a forgotten id, which is rare).
 */
async function lockAccounts(tx: Tx, clientId: string, keys: AccountKey[], known: AccountIds): Promise<Map<string, LockedAccount>> {
  const knownIds = keys.map((k) => known.get(clientId, k.key));
  if (knownIds.every((id) => id !== undefined)) {
    const rows = await lockByIds(tx, knownIds);
    if (rows.length === keys.length) return byKey(keys, (k) => known.get(clientId, k.key)!, rows);
    for (const k of keys) known.forget(clientId, k.key);
  }
  let ids = await findAccountIds(tx, clientId, keys);
  const missing = keys.filter((k) => !ids.has(k.key));
  if (missing.length) {
    for (const account of missing) {
      known.created(tx, clientId, account.key);
      await tx.$executeRaw`
        INSERT INTO "ledger_accounts" ("id", "clientId", "userId", "code", "currency", "shard")
        VALUES (${randomUUID()}::uuid, ${clientId}::uuid, ${account.userId}::uuid, ${account.code}, ${account.currency}, ${account.shard})
        ON CONFLICT DO NOTHING`;
    }
    ids = await findAccountIds(tx, clientId, keys);
  }
  for (const k of keys) known.found(tx, clientId, k.key, ids.get(k.key)!);
  return byKey(keys, (k) => ids.get(k.key)!, await lockByIds(tx, keys.map((k) => ids.get(k.key)!)));
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

/** The journal, all its entries and its accounts' new balances and chain ends, in one statement. */
function writeJournal(tx: Tx, journal: JournalRow, entries: EntryRow[], accounts: LockedAccount[]) {
  const column = <K extends keyof EntryRow>(key: K) => entries.map((entry) => entry[key]);
  return tx.$executeRaw`
    WITH "journal" AS (
      INSERT INTO "ledger_journals" ("id", "clientId", "type", "referenceId", "createdAt")
      VALUES (${journal.id}::uuid, ${journal.clientId}::uuid, ${journal.type}, ${journal.referenceId}, ${journal.createdAt})
    ), "entries" AS (
      INSERT INTO "ledger_entries" ("id", "journalId", "accountId", "clientId", "userId", "sequence", "type", "currency",
                                    "amount", "balanceBefore", "balanceAfter", "referenceId", "prevHash", "hash", "createdAt")
      SELECT e."id", ${journal.id}::uuid, e."accountId", ${journal.clientId}::uuid, e."userId", e."sequence", e."type", e."currency",
             e."amount"::numeric, e."balanceBefore"::numeric, e."balanceAfter"::numeric, ${journal.referenceId}, e."prevHash", e."hash",
             ${journal.createdAt}
      FROM unnest(${column("id")}::uuid[], ${column("accountId")}::uuid[], ${column("userId")}::uuid[], ${column("sequence")}::int[],
                  ${column("type")}::text[], ${column("currency")}::text[], ${column("amount")}::text[], ${column("balanceBefore")}::text[],
                  ${column("balanceAfter")}::text[], ${column("prevHash")}::text[], ${column("hash")}::text[])
        AS e("id", "accountId", "userId", "sequence", "type", "currency", "amount", "balanceBefore", "balanceAfter", "prevHash", "hash")
    )
    UPDATE "ledger_accounts" AS a SET "balance" = u."balance"::numeric, "entryCount" = u."entryCount", "lastEntryHash" = u."lastEntryHash"
    FROM unnest(${accounts.map((a) => a.id)}::uuid[], ${accounts.map((a) => a.balance)}::text[], ${accounts.map((a) => a.entryCount)}::int[],
                ${accounts.map((a) => a.lastEntryHash)}::text[]) AS u("id", "balance", "entryCount", "lastEntryHash")
    WHERE a."id" = u."id"`;
}

/**
 * Writes one balanced journal inside the caller's transaction: every posting becomes an entry that
 * extends its account's chain (sequence, balanceBefore → balanceAfter, hash of the previous entry).
 * A user balance that would go below zero refuses the whole journal with INSUFFICIENT_FUNDS.
 */
export async function postJournal(tx: Tx, journal: JournalInput, known: AccountIds) {
  assertBalanced(journal);
  const shard = houseShardOf(journal);
  const accounts = await lockAccounts(tx, journal.clientId, accountKeys(journal.postings.map((p) => p.account), shard), known);
  const journalId = randomUUID();
  const createdAt = new Date();
  const entries = journal.postings.map((posting) => {
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
  const row = { id: journalId, clientId: journal.clientId, type: journal.type, referenceId: journal.referenceId ?? null, createdAt };
  await writeJournal(tx, row, entries, [...accounts.values()]);
  return { journalId, entries };
}
