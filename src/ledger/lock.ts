import { randomUUID } from "node:crypto";
import type { Sql } from "../db/sql.js";
import type { AccountIds } from "./account-ids.js";
import type { AccountRef } from "./types.js";

export type LockedAccount = { id: string; code: string; currency: string; balance: string; held: string; entryCount: number; lastEntryHash: string | null };

export const USER = "USER";

type AccountKey = { key: string; userId: string | null; code: string; currency: string; shard: number };

const userKey = (userId: string, currency: string) => `${USER}:${userId}:${currency}`;
const systemKey = (code: string, shard: number, currency: string) => `${code}#${shard}:${currency}`;

/** The account a posting goes to: the user's balance, or the given shard of a house account. */
export const keyOf = (ref: AccountRef, shard: number) => ("userId" in ref ? userKey(ref.userId, ref.currency) : systemKey(ref.system, shard, ref.currency));

/** The distinct accounts of some postings, each with the house shard of its journal. */
export function accountKeys(refs: { account: AccountRef; shard: number }[]): AccountKey[] {
  const keys = new Map<string, AccountKey>();
  for (const { account, shard } of refs) {
    const key = keyOf(account, shard);
    if ("userId" in account) keys.set(key, { key, userId: account.userId, code: USER, currency: account.currency, shard: 0 });
    else keys.set(key, { key, userId: null, code: account.system, currency: account.currency, shard });
  }
  // One global order for creating accounts too: two journals opening the same new accounts never wait in a cycle.
  return [...keys.values()].sort((a, b) => (a.key < b.key ? -1 : 1));
}

const FIND_ACCOUNT_IDS = `SELECT "id", "userId", "code", "currency", "shard" FROM "ledger_accounts"
  WHERE "clientId" = $1::uuid AND "currency" = ANY($2::text[])
    AND (("userId" = ANY($3::uuid[]) AND "code" = '${USER}') OR ("userId" IS NULL AND "code" = ANY($4::text[]) AND "shard" = ANY($5::int[])))`;

/** The ids of the accounts that exist (one read, no lock; it may return a few other accounts of the same users). */
async function findAccountIds(tx: Sql, clientId: string, keys: AccountKey[]): Promise<Map<string, string>> {
  const distinct = <T>(values: T[]) => [...new Set(values)];
  const rows = await tx.query<{ id: string; userId: string | null; code: string; currency: string; shard: number }>("ledger_find_accounts", FIND_ACCOUNT_IDS, [
    clientId,
    distinct(keys.map((k) => k.currency)),
    distinct(keys.flatMap((k) => (k.userId ? [k.userId] : []))),
    distinct(keys.flatMap((k) => (k.userId ? [] : [k.code]))),
    distinct(keys.map((k) => k.shard)),
  ]);
  return new Map(rows.map((row) => [row.userId ? userKey(row.userId, row.currency) : systemKey(row.code, row.shard, row.currency), row.id]));
}

const CREATE_ACCOUNT = `INSERT INTO "ledger_accounts" ("id", "clientId", "userId", "code", "currency", "shard")
  VALUES ($1::uuid, $2::uuid, $3::uuid, $4, $5, $6) ON CONFLICT DO NOTHING`;

/** Row locks taken in one statement and one global order (ids): two journals never wait on each other in a cycle. */
const LOCK_BY_IDS = `SELECT "id", "code", "currency", "balance"::text AS "balance", "held"::text AS "held", "entryCount", "lastEntryHash"
  FROM "ledger_accounts" WHERE "id" = ANY($1::uuid[]) ORDER BY "id" FOR UPDATE`;
const lockByIds = (tx: Sql, ids: string[]) => tx.query<LockedAccount>("ledger_lock_accounts", LOCK_BY_IDS, [ids]);

const byKey = (keys: AccountKey[], idOf: (key: AccountKey) => string, rows: LockedAccount[]) => {
  const byId = new Map(rows.map((row) => [row.id, row]));
  return new Map(keys.map((k) => [k.key, byId.get(idOf(k))!]));
};

/**
 * Locks the accounts, in id order, in one statement. Accounts whose ids this process knows are
 * locked straight away; otherwise their ids are read and missing accounts created first, before
 * any row lock is held (except after a forgotten id, which is rare).
 */
export async function lockAccounts(tx: Sql, clientId: string, keys: AccountKey[], known: AccountIds): Promise<Map<string, LockedAccount>> {
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
      await tx.query("ledger_create_account", CREATE_ACCOUNT, [randomUUID(), clientId, account.userId, account.code, account.currency, account.shard]);
    }
    ids = await findAccountIds(tx, clientId, keys);
  }
  for (const k of keys) known.found(tx, clientId, k.key, ids.get(k.key)!);
  return byKey(keys, (k) => ids.get(k.key)!, await lockByIds(tx, keys.map((k) => ids.get(k.key)!)));
}
