import type { Mode } from "../modes.js";
import type { Sql } from "../db/sql.js";

// The watcher's state, as plain SQL on the same connections as the deposit writes it commits with.
// Block numbers travel as text: they are BIGINT columns, and a JavaScript number is not a bigint.

export type Cursor = { blockNumber: bigint; blockHash: string };
export type StoredBlock = { number: bigint; hash: string };
export type BlockHeader = StoredBlock & { parentHash: string };

const TAKE_LEASE = `
  INSERT INTO "chain_leases" ("chainId", "role", "holder", "expiresAt") VALUES ($1::int, $4, $2, now() + $3::int * interval '1 millisecond')
  ON CONFLICT ("chainId", "role") DO UPDATE SET "holder" = EXCLUDED."holder", "expiresAt" = EXCLUDED."expiresAt"
  WHERE "chain_leases"."holder" = EXCLUDED."holder" OR "chain_leases"."expiresAt" < now()
  RETURNING 1 AS "held"`;

/** Who works a chain: its watcher (deposits in) and its sender (transfers out), one of each across instances. */
export type LeaseRole = "watcher" | "sender";

/** Takes or renews the chain's lease for `holder` in `role`; false while another holder's lease runs. */
export async function takeLease(sql: Sql, chainId: number, role: LeaseRole, holder: string, leaseMs: number): Promise<boolean> {
  return (await sql.query("chain_lease_take", TAKE_LEASE, [chainId, holder, leaseMs, role])).length > 0;
}

export async function releaseLease(sql: Sql, chainId: number, role: LeaseRole, holder: string): Promise<void> {
  await sql.query("chain_lease_release", `DELETE FROM "chain_leases" WHERE "chainId" = $1::int AND "role" = $3 AND "holder" = $2`, [chainId, holder, role]);
}

const CURSOR = `SELECT "blockNumber"::text AS "blockNumber", "blockHash" FROM "chain_cursors" WHERE "chainId" = $1::int`;

export async function readCursor(sql: Sql, chainId: number): Promise<Cursor | undefined> {
  const [row] = await sql.query<{ blockNumber: string; blockHash: string }>("chain_cursor", CURSOR, [chainId]);
  return row && { blockNumber: BigInt(row.blockNumber), blockHash: row.blockHash };
}

const START_CURSOR = `
  INSERT INTO "chain_cursors" ("chainId", "network", "blockNumber", "blockHash", "headBlock", "updatedAt")
  VALUES ($1::int, $2, $3::bigint, $4, $5::bigint, now()) ON CONFLICT DO NOTHING`;

/** The first start on a chain: the block before the first one to scan counts as finished. */
export async function startCursor(sql: Sql, chainId: number, network: string, block: StoredBlock, head: bigint): Promise<void> {
  await sql.query("chain_cursor_start", START_CURSOR, [chainId, network, block.number.toString(), block.hash, head.toString()]);
}

const MOVE_CURSOR = `
  UPDATE "chain_cursors" SET "blockNumber" = $4::bigint, "blockHash" = $5, "headBlock" = greatest($6::bigint, $4::bigint), "updatedAt" = now()
  WHERE "chainId" = $1::int AND "blockNumber" = $2::bigint AND "blockHash" = $3
  RETURNING 1 AS "moved"`;

/**
 * Compare-and-set: the cursor moves from `from` to `to` only if it is still at `from` (the row lock
 * makes a second writer wait, then find it moved). False when another watcher moved it first.
 */
export async function moveCursor(tx: Sql, chainId: number, from: Cursor, to: Cursor, head: bigint): Promise<boolean> {
  const values = [chainId, from.blockNumber.toString(), from.blockHash, to.blockNumber.toString(), to.blockHash, head.toString()];
  return (await tx.query("chain_cursor_move", MOVE_CURSOR, values)).length > 0;
}

const HEAD = `UPDATE "chain_cursors" SET "headBlock" = greatest($2::bigint, "blockNumber"), "updatedAt" = now() WHERE "chainId" = $1::int`;

export async function recordHead(sql: Sql, chainId: number, head: bigint): Promise<void> {
  await sql.query("chain_cursor_head", HEAD, [chainId, head.toString()]);
}

const KEEP_BLOCKS = `
  INSERT INTO "chain_blocks" ("chainId", "number", "hash", "parentHash")
  SELECT $1::int, n::bigint, h, p FROM unnest($2::text[], $3::text[], $4::text[]) AS b(n, h, p)
  ON CONFLICT ("chainId", "number") DO UPDATE SET "hash" = EXCLUDED."hash", "parentHash" = EXCLUDED."parentHash"`;
const PRUNE_BLOCKS = `DELETE FROM "chain_blocks" WHERE "chainId" = $1::int AND "number" < $2::bigint`;

/** Keeps the headers the watcher passed, and forgets those older than `keepFrom`. */
export async function keepBlocks(tx: Sql, chainId: number, headers: BlockHeader[], keepFrom: bigint): Promise<void> {
  const column = (pick: (header: BlockHeader) => string) => headers.map(pick);
  await tx.query("chain_blocks_keep", KEEP_BLOCKS, [chainId, column((h) => h.number.toString()), column((h) => h.hash), column((h) => h.parentHash)]);
  await tx.query("chain_blocks_prune", PRUNE_BLOCKS, [chainId, keepFrom.toString()]);
}

const STORED_BLOCKS = `SELECT "number"::text AS "number", "hash" FROM "chain_blocks" WHERE "chainId" = $1::int AND "number" <= $2::bigint ORDER BY "number" DESC`;

export async function storedBlocks(sql: Sql, chainId: number, upTo: bigint): Promise<StoredBlock[]> {
  const rows = await sql.query<{ number: string; hash: string }>("chain_blocks_stored", STORED_BLOCKS, [chainId, upTo.toString()]);
  return rows.map((row) => ({ number: BigInt(row.number), hash: row.hash }));
}

const DETACH = `UPDATE "chain_deposits" SET "blockHash" = NULL WHERE "chainId" = $1::int AND "settledAt" IS NULL AND "blockNumber" > $2::bigint`;
const FORGET_BLOCKS = `DELETE FROM "chain_blocks" WHERE "chainId" = $1::int AND "number" > $2::bigint`;

/**
 * After a reorg, back to the common ancestor: the open deposits above it are detached (their block
 * is no longer known canonical) until the transfer is seen again or its depth passes.
 */
export async function rewindTo(tx: Sql, chainId: number, ancestor: bigint): Promise<void> {
  await tx.query("chain_rewind_deposits", DETACH, [chainId, ancestor.toString()]);
  await tx.query("chain_rewind_blocks", FORGET_BLOCKS, [chainId, ancestor.toString()]);
}

export type SettledPlace = { depositId: string; blockNumber: bigint; blockHash: string };

const COMPLETED_ABOVE = `
  SELECT "depositId", "blockNumber"::text AS "blockNumber", "blockHash" FROM "chain_deposits"
  WHERE "chainId" = $1::int AND "outcome" = 'COMPLETED' AND "flag" IS NULL AND "blockNumber" > $2::bigint`;

/** The completed (credited) deposits above a block, not flagged yet: a reorg deeper than the depth may have taken their transfer. */
export async function completedAbove(sql: Sql, chainId: number, ancestor: bigint): Promise<SettledPlace[]> {
  const rows = await sql.query<{ depositId: string; blockNumber: string; blockHash: string }>("chain_completed_above", COMPLETED_ABOVE, [chainId, ancestor.toString()]);
  return rows.map((row) => ({ ...row, blockNumber: BigInt(row.blockNumber) }));
}

/** Why an operator must look at a deposit (docs/chain.md, Deep reorgs). */
export type DepositFlag = "ORPHANED" | "UNSETTLEABLE";

const FLAG = `UPDATE "chain_deposits" SET "flag" = $2, "flaggedAt" = now() WHERE "depositId" = ANY($1::uuid[]) AND "flag" IS NULL RETURNING "depositId"`;

/** Flags the deposits not flagged yet; returns those it flagged (each event is reported once). */
export async function flagDeposits(tx: Sql, depositIds: string[], flag: DepositFlag): Promise<string[]> {
  if (depositIds.length === 0) return [];
  return (await tx.query<{ depositId: string }>("chain_deposits_flag", FLAG, [depositIds, flag])).map((row) => row.depositId);
}

const FLAGGED = `SELECT "flag", count(*)::int AS "count" FROM "chain_deposits" WHERE "chainId" = $1::int AND "flag" IS NOT NULL GROUP BY "flag"`;

/** How many deposits of the chain carry each flag. */
export async function flaggedCounts(sql: Sql, chainId: number): Promise<Record<DepositFlag, number>> {
  const counts: Record<DepositFlag, number> = { ORPHANED: 0, UNSETTLEABLE: 0 };
  for (const row of await sql.query<{ flag: DepositFlag; count: number }>("chain_deposits_flagged", FLAGGED, [chainId])) counts[row.flag] = row.count;
  return counts;
}

const OWNERS = `
  SELECT w."address", w."clientId", w."userId" FROM "wallets" w JOIN "clients" c ON c."id" = w."clientId"
  WHERE w."address" = ANY($1::text[]) AND c."mode" = $2`;

/**
 * The custodial wallets of `mode`'s tenants among `addresses` (EIP-55): one query for a whole block
 * range, whatever the number of wallets. A chain serves one mode: a transfer on it to another mode's
 * address is no deposit (SPEC §15).
 */
export async function walletOwners(sql: Sql, addresses: string[], mode: Mode): Promise<Map<string, { clientId: string; userId: string }>> {
  if (addresses.length === 0) return new Map();
  const rows = await sql.query<{ address: string; clientId: string; userId: string }>("chain_wallet_owners", OWNERS, [addresses, mode]);
  return new Map(rows.map((row) => [row.address, { clientId: row.clientId, userId: row.userId }]));
}

export type TrackedTransfer = {
  depositId: string;
  transactionHash: string;
  logIndex: number;
  blockHash: string | null;
  /** Null on rows recorded before transfer keys: those are matched by their log index. */
  transferKey: string | null;
  outcome: "COMPLETED" | "FAILED" | null;
  flag: DepositFlag | null;
};

const TRACKED = `
  SELECT "depositId", "transactionHash", "logIndex", "blockHash", "transferKey", "outcome", "flag"
  FROM "chain_deposits" WHERE "chainId" = $1::int AND "transactionHash" = ANY($2::text[])`;

/** The transfers of these transactions already recorded as deposits on the chain (failed ones included). */
export function trackedTransfers(sql: Sql, chainId: number, transactionHashes: string[]): Promise<TrackedTransfer[]> {
  if (transactionHashes.length === 0) return Promise.resolve([]);
  return sql.query<TrackedTransfer>("chain_deposits_tracked", TRACKED, [chainId, transactionHashes]);
}

const TRACK = `
  INSERT INTO "chain_deposits" ("depositId", "chainId", "transactionHash", "logIndex", "blockNumber", "blockHash", "transferKey", "createdAt")
  VALUES ($1::uuid, $2::int, $3, $4::int, $5::bigint, $6, $7, now())`;

export type TransferPlace = { transactionHash: string; logIndex: number; blockNumber: bigint; blockHash: string; transferKey: string };

export async function trackDeposit(tx: Sql, depositId: string, chainId: number, place: TransferPlace): Promise<void> {
  const values = [depositId, chainId, place.transactionHash, place.logIndex, place.blockNumber.toString(), place.blockHash, place.transferKey];
  await tx.query("chain_deposit_track", TRACK, values);
}

const REATTACH = `
  UPDATE "chain_deposits" SET "blockNumber" = $2::bigint, "blockHash" = $3, "logIndex" = $4::int,
    "flaggedAt" = CASE WHEN "flag" = 'ORPHANED' THEN NULL ELSE "flaggedAt" END,
    "flag" = CASE WHEN "flag" = 'ORPHANED' THEN NULL ELSE "flag" END
  WHERE "depositId" = $1::uuid AND "outcome" IS DISTINCT FROM 'FAILED'`;

/**
 * A transfer seen again after a reorg: its deposit follows the block and log index it is at now. An
 * open one completes at its new depth; a completed one flagged ORPHANED is not any more (its
 * transfer is back on the canonical chain).
 */
export async function reattachDeposit(tx: Sql, depositId: string, place: Pick<TransferPlace, "blockNumber" | "blockHash" | "logIndex">): Promise<void> {
  await tx.query("chain_deposit_reattach", REATTACH, [depositId, place.blockNumber.toString(), place.blockHash, place.logIndex]);
}

export type OpenDeposit = { depositId: string; provider: string; eventId: string };

const DUE = `
  SELECT cd."depositId", d."provider", d."eventId" FROM "chain_deposits" cd JOIN "deposits" d ON d."id" = cd."depositId"
  WHERE cd."chainId" = $1::int AND cd."settledAt" IS NULL AND cd."blockNumber" <= $2::bigint AND (cd."blockHash" IS NULL) = $3::boolean
  ORDER BY cd."blockNumber" LIMIT $4::int`;

/**
 * Open deposits whose block is at most `deepest`: attached ones (their block canonical) are due to
 * complete, detached ones (their block left the chain, the transfer not seen again) are due to fail.
 */
export function dueDeposits(sql: Sql, chainId: number, deepest: bigint, detached: boolean, take: number): Promise<OpenDeposit[]> {
  return sql.query<OpenDeposit>("chain_deposits_due", DUE, [chainId, deepest.toString(), detached, take]);
}

const SETTLE = `
  UPDATE "chain_deposits" SET "settledAt" = now(), "outcome" = $4
  WHERE "depositId" = $1::uuid AND "settledAt" IS NULL AND "blockNumber" <= $2::bigint AND ("blockHash" IS NULL) = $3::boolean
  RETURNING 1 AS "settled"`;

/**
 * Closes the chain's side of a deposit with its outcome, if it is still in the state it was chosen
 * in (a rewind may have come between).
 */
export async function settleTracked(tx: Sql, depositId: string, deepest: bigint, detached: boolean, outcome: "COMPLETED" | "FAILED"): Promise<boolean> {
  return (await tx.query("chain_deposit_settle", SETTLE, [depositId, deepest.toString(), detached, outcome])).length > 0;
}

export type CursorView = { chainId: number; blockNumber: string; headBlock: string; updatedAt: Date };

const CURSORS = `SELECT "chainId", "blockNumber"::text AS "blockNumber", "headBlock"::text AS "headBlock", "updatedAt" FROM "chain_cursors" WHERE "chainId" = ANY($1::int[])`;

export function cursorsOf(sql: Sql, chainIds: number[]): Promise<CursorView[]> {
  if (chainIds.length === 0) return Promise.resolve([]);
  return sql.query<CursorView>("chain_cursors_of", CURSORS, [chainIds]);
}
