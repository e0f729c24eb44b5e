import { randomUUID } from "node:crypto";
import type { Address, Hash, Hex } from "viem";
import type { Sql } from "../db/sql.js";

// The sender's state, as plain SQL. Big numbers (nonces, wei, gas) travel as text and come back as bigint.

export const SEND_PURPOSES = ["WITHDRAWAL", "FORWARD", "SWEEP", "GAS"] as const;
export type SendPurpose = (typeof SEND_PURPOSES)[number];

/**
 * QUEUED (no transaction yet) → SIGNED (nonce given, transaction stored, maybe not broadcast) → SENT
 * (broadcast) → MINED (a receipt on the canonical chain) → CONFIRMED (at the confirmation depth);
 * FAILED when the token refuses the transfer or it reverts on chain. A MINED send whose block leaves
 * the canonical chain goes back to SENT and is broadcast again (the same transaction); so does a
 * CONFIRMED one that a reorg deeper than the confirmation depth took off the chain (`reorgedAt` set).
 * ORPHANED: none of its transactions is on the chain and another transaction, not signed by the
 * platform, took its nonce: it can never be mined as signed, and waits for the operator.
 */
export const SEND_STATUS = {
  QUEUED: "QUEUED",
  SIGNED: "SIGNED",
  SENT: "SENT",
  MINED: "MINED",
  CONFIRMED: "CONFIRMED",
  FAILED: "FAILED",
  ORPHANED: "ORPHANED",
} as const;
export type SendStatus = keyof typeof SEND_STATUS;
/** Why a QUEUED send waits: its sending address lacks the tokens, or the native coin to pay its gas; or (a sweep) the fees are too high. */
export const WAITING_FOR = ["TOKENS", "GAS", "FEES"] as const;
export type WaitingFor = (typeof WAITING_FOR)[number];

export type ChainSend = {
  id: string;
  chainId: number;
  network: string;
  purpose: SendPurpose;
  purposeId: string;
  fromAddress: Address;
  toAddress: Address;
  /** null: native coin (GAS). */
  tokenAddress: Address | null;
  /** Whole token units, as text (exact). */
  amount: string;
  status: SendStatus;
  waitingFor: WaitingFor | null;
  nonce: bigint | null;
  transactionHash: Hash | null;
  rawTransaction: Hex | null;
  maxFeePerGas: bigint | null;
  maxPriorityFeePerGas: bigint | null;
  gasLimit: bigint | null;
  broadcastAt: Date | null;
  blockNumber: bigint | null;
  /** When a reorg deeper than the confirmation depth took its confirmed transaction off the chain. */
  reorgedAt: Date | null;
  createdAt: Date;
  /** Every transaction signed for it (SIGNED and later). */
  attempts: Hash[];
};

type SendRow = Omit<ChainSend, "nonce" | "maxFeePerGas" | "maxPriorityFeePerGas" | "gasLimit" | "blockNumber" | "attempts"> & {
  nonce: string | null;
  maxFeePerGas: string | null;
  maxPriorityFeePerGas: string | null;
  gasLimit: string | null;
  blockNumber: string | null;
  attempts: Hash[] | null;
};

const big = (value: string | null) => (value === null ? null : BigInt(value));
const asSend = (row: SendRow): ChainSend => ({
  ...row,
  nonce: big(row.nonce),
  maxFeePerGas: big(row.maxFeePerGas),
  maxPriorityFeePerGas: big(row.maxPriorityFeePerGas),
  gasLimit: big(row.gasLimit),
  blockNumber: big(row.blockNumber),
  attempts: row.attempts ?? [],
});

const COLUMNS = `s."id", s."chainId", s."network", s."purpose", s."purposeId", s."fromAddress", s."toAddress", s."tokenAddress", s."amount"::text AS "amount",
  s."status", s."waitingFor", s."nonce"::text AS "nonce", s."transactionHash", s."rawTransaction", s."maxFeePerGas"::text AS "maxFeePerGas",
  s."maxPriorityFeePerGas"::text AS "maxPriorityFeePerGas", s."gasLimit"::text AS "gasLimit", s."broadcastAt", s."blockNumber"::text AS "blockNumber", s."reorgedAt", s."createdAt",
  (SELECT array_agg(a."transactionHash" ORDER BY a."createdAt") FROM "chain_send_attempts" a WHERE a."sendId" = s."id") AS "attempts"`;

export type NewSend = {
  chainId: number;
  network: string;
  purpose: SendPurpose;
  purposeId: string;
  from: Address;
  to: Address;
  token: Address | null;
  amount: string;
};

const QUEUE = `
  INSERT INTO "chain_sends" ("id", "chainId", "network", "purpose", "purposeId", "fromAddress", "toAddress", "tokenAddress", "amount", "status")
  VALUES ($1::uuid, $2::int, $3, $4, $5, $6, $7, $8, $9::numeric, 'QUEUED')
  ON CONFLICT ("purpose", "purposeId") DO NOTHING RETURNING "id"`;

/** Queues a send in the caller's transaction; a purpose already queued keeps its send (undefined). */
export async function queueSend(tx: Sql, send: NewSend): Promise<string | undefined> {
  const values = [randomUUID(), send.chainId, send.network, send.purpose, send.purposeId, send.from, send.to, send.token, send.amount];
  const [row] = await tx.query<{ id: string }>("chain_send_queue", QUEUE, values);
  return row?.id;
}

const BY_STATUS = `SELECT ${COLUMNS} FROM "chain_sends" s WHERE s."chainId" = $1::int AND s."status" = ANY($2::text[]) ORDER BY s."createdAt", s."id" LIMIT $3::int`;

/** A chain's sends in these states, oldest first. */
export async function sendsIn(sql: Sql, chainId: number, statuses: SendStatus[], take: number): Promise<ChainSend[]> {
  return (await sql.query<SendRow>("chain_sends_in", BY_STATUS, [chainId, statuses, take])).map(asSend);
}

const BY_PURPOSE = `SELECT ${COLUMNS} FROM "chain_sends" s WHERE s."purpose" = $1 AND s."purposeId" = $2`;

export async function sendFor(sql: Sql, purpose: SendPurpose, purposeId: string): Promise<ChainSend | undefined> {
  const [row] = await sql.query<SendRow>("chain_send_for", BY_PURPOSE, [purpose, purposeId]);
  return row && asSend(row);
}

// The row exists before it is locked: FOR UPDATE on a row not yet there locks nothing, and two first sends from
// one address would both start at the chain's count.
const ENSURE_NONCE = `INSERT INTO "chain_nonces" ("chainId", "address", "next") VALUES ($1::int, $2, 0) ON CONFLICT ("chainId", "address") DO NOTHING`;
const LOCK_NONCE = `SELECT "next"::text AS "next" FROM "chain_nonces" WHERE "chainId" = $1::int AND "address" = $2 FOR UPDATE`;
const SET_NONCE = `UPDATE "chain_nonces" SET "next" = $3::bigint WHERE "chainId" = $1::int AND "address" = $2`;

/**
 * Takes `count` consecutive nonces from `address`, in the caller's transaction, and returns the first. The stored
 * next nonce is locked until the transaction ends (two signers never give one nonce twice) and is a floor over
 * `chainCount`, the node's pending count: a transaction signed and stored but not yet on the node holds its nonce.
 */
export async function takeNonces(tx: Sql, chainId: number, address: Address, chainCount: bigint, count: number): Promise<bigint> {
  const lock = () => tx.query<{ next: string }>("chain_nonce_lock", LOCK_NONCE, [chainId, address]);
  let [row] = await lock();
  if (!row) {
    await tx.query("chain_nonce_ensure", ENSURE_NONCE, [chainId, address]);
    [row] = await lock();
  }
  const stored = BigInt(row.next);
  const first = stored > chainCount ? stored : chainCount;
  await tx.query("chain_nonce_set", SET_NONCE, [chainId, address, (first + BigInt(count)).toString()]);
  return first;
}


export type SignedTransaction = { hash: Hash; raw: Hex; maxFeePerGas: bigint; maxPriorityFeePerGas: bigint; gasLimit: bigint };

const ATTEMPT = `INSERT INTO "chain_send_attempts" ("transactionHash", "sendId", "rawTransaction", "maxFeePerGas") VALUES ($1, $2::uuid, $3, $4::numeric)`;
const SIGN = `
  UPDATE "chain_sends" SET "status" = 'SIGNED', "waitingFor" = NULL, "nonce" = $2::bigint, "transactionHash" = $3, "rawTransaction" = $4, "maxFeePerGas" = $5::numeric,
    "maxPriorityFeePerGas" = $6::numeric, "gasLimit" = $7::numeric, "broadcastAt" = NULL, "updatedAt" = now()
  WHERE "id" = $1::uuid AND "status" = 'QUEUED' RETURNING 1 AS "signed"`;
const REPLACE = `
  UPDATE "chain_sends" SET "transactionHash" = $2, "rawTransaction" = $3, "maxFeePerGas" = $4::numeric, "maxPriorityFeePerGas" = $5::numeric,
    "broadcastAt" = now(), "updatedAt" = now()
  WHERE "id" = $1::uuid AND "status" IN ('SIGNED', 'SENT') RETURNING 1 AS "replaced"`;

/** QUEUED → SIGNED at `nonce`: the transaction is stored (with its hash) before anything is broadcast. */
export async function markSigned(tx: Sql, id: string, nonce: bigint, signed: SignedTransaction): Promise<boolean> {
  const values = [id, nonce.toString(), signed.hash, signed.raw, signed.maxFeePerGas.toString(), signed.maxPriorityFeePerGas.toString(), signed.gasLimit.toString()];
  if ((await tx.query("chain_send_sign", SIGN, values)).length === 0) return false;
  await tx.query("chain_send_attempt", ATTEMPT, [signed.hash, id, signed.raw, signed.maxFeePerGas.toString()]);
  return true;
}

/**
 * A replacement at the same nonce, stored before its broadcast; the earlier ones stay known (any of them may be
 * mined). Its replacement clock starts now, broadcast or not: a node that refuses it (or a crash before its
 * broadcast) leaves the earlier transaction in the pool, and the next bump comes CHAIN_REPLACE_AFTER_MS later,
 * never once a pass.
 */
export async function markReplaced(tx: Sql, id: string, signed: SignedTransaction): Promise<boolean> {
  const values = [id, signed.hash, signed.raw, signed.maxFeePerGas.toString(), signed.maxPriorityFeePerGas.toString()];
  if ((await tx.query("chain_send_replace", REPLACE, values)).length === 0) return false;
  await tx.query("chain_send_attempt", ATTEMPT, [signed.hash, id, signed.raw, signed.maxFeePerGas.toString()]);
  return true;
}

const SENT = `UPDATE "chain_sends" SET "status" = 'SENT', "broadcastAt" = now(), "updatedAt" = now() WHERE "id" = $1::uuid AND "status" IN ('SIGNED', 'SENT') RETURNING 1 AS "sent"`;

/** Broadcast (again): SIGNED or SENT → SENT; the replacement clock starts now. False when the send moved on meanwhile. */
export async function markSent(tx: Sql, id: string): Promise<boolean> {
  return (await tx.query("chain_send_sent", SENT, [id])).length > 0;
}

const MINED = `
  UPDATE "chain_sends" SET "status" = 'MINED', "transactionHash" = $2, "blockNumber" = $3::bigint,
    "rawTransaction" = (SELECT a."rawTransaction" FROM "chain_send_attempts" a WHERE a."transactionHash" = $2), "updatedAt" = now()
  WHERE "id" = $1::uuid AND "status" IN ('SIGNED', 'SENT', 'MINED') RETURNING 1 AS "mined"`;

/** One of its transactions has a receipt: the send follows that one (a replacement, or the first). */
export async function markMined(tx: Sql, id: string, hash: Hash, blockNumber: bigint): Promise<boolean> {
  return (await tx.query("chain_send_mined", MINED, [id, hash, blockNumber.toString()])).length > 0;
}

const UNMINED = `UPDATE "chain_sends" SET "status" = 'SENT', "blockNumber" = NULL, "broadcastAt" = NULL, "updatedAt" = now() WHERE "id" = $1::uuid AND "status" = 'MINED'`;

/** Its block left the canonical chain: back to SENT, to be broadcast again. */
export async function markUnmined(tx: Sql, id: string): Promise<void> {
  await tx.query("chain_send_unmined", UNMINED, [id]);
}

const FINISH = `
  UPDATE "chain_sends" SET "status" = $2, "failureReason" = $3, "waitingFor" = NULL, "updatedAt" = now()
  WHERE "id" = $1::uuid AND "status" = ANY($4::text[]) RETURNING 1 AS "finished"`;

const SENDERS = `
  SELECT DISTINCT "fromAddress" AS "address" FROM "chain_sends"
  WHERE "chainId" = $1::int AND ("status" IN ('SIGNED', 'SENT', 'MINED') OR ("status" = 'CONFIRMED' AND "blockNumber" >= $2::bigint))`;

/** The addresses with sends open, or confirmed in a block from `sinceBlock` on: those whose nonces the sender checks against the chain. */
export async function activeSenders(sql: Sql, chainId: number, sinceBlock: bigint): Promise<Address[]> {
  return (await sql.query<{ address: Address }>("chain_send_senders", SENDERS, [chainId, sinceBlock.toString()])).map((row) => row.address);
}

const AT_OR_ABOVE = `SELECT ${COLUMNS} FROM "chain_sends" s WHERE s."chainId" = $1::int AND s."fromAddress" = $2 AND s."status" = 'CONFIRMED' AND s."nonce" >= $3::bigint ORDER BY s."nonce" LIMIT $4::int`;

/** `from`'s CONFIRMED sends at or above `nonce` (the chain's count: none of them can be on the chain), lowest first. */
export async function confirmedFrom(sql: Sql, chainId: number, from: Address, nonce: bigint, take: number): Promise<ChainSend[]> {
  return (await sql.query<SendRow>("chain_sends_confirmed_from", AT_OR_ABOVE, [chainId, from, nonce.toString(), take])).map(asSend);
}

const REOPEN = `
  UPDATE "chain_sends" SET "status" = 'SENT', "blockNumber" = NULL, "broadcastAt" = NULL, "reorgedAt" = now(), "updatedAt" = now()
  WHERE "id" = $1::uuid AND "status" = 'CONFIRMED' RETURNING 1 AS "reopened"`;

/** A CONFIRMED send whose transaction a reorg deeper than the confirmation depth took off the chain: SENT again, to be broadcast. */
export async function markReopened(tx: Sql, id: string): Promise<boolean> {
  return (await tx.query("chain_send_reopen", REOPEN, [id])).length > 0;
}

/** → ORPHANED: another transaction took its nonce, so none of its own can be mined (see SEND_STATUS). */
export async function markOrphaned(tx: Sql, id: string, reason: string): Promise<boolean> {
  return (await tx.query("chain_send_finish", FINISH, [id, "ORPHANED", reason, ["SIGNED", "SENT", "MINED", "CONFIRMED"]])).length > 0;
}

/** MINED → CONFIRMED at the confirmation depth. */
export async function markConfirmed(tx: Sql, id: string): Promise<boolean> {
  return (await tx.query("chain_send_finish", FINISH, [id, "CONFIRMED", null, ["MINED"]])).length > 0;
}

const WITHDRAW = `
  UPDATE "chain_sends" SET "status" = 'FAILED', "failureReason" = $3, "waitingFor" = NULL, "updatedAt" = now()
  WHERE "purpose" = $1 AND "purposeId" = $2 AND "status" = 'QUEUED' RETURNING 1 AS "withdrawn"`;

/**
 * A send taken back before it was signed: QUEUED → FAILED. False once the sender signed it (its signing is
 * conditional on QUEUED too, and rolls back whole when it loses): of the two, exactly one wins.
 */
export async function withdrawQueuedSend(tx: Sql, purpose: SendPurpose, purposeId: string, reason: string): Promise<boolean> {
  return (await tx.query("chain_send_withdraw", WITHDRAW, [purpose, purposeId, reason])).length > 0;
}

/** → FAILED, for good (the token refused it, or it reverted on chain). */
export async function markFailed(tx: Sql, id: string, reason: string): Promise<boolean> {
  return (await tx.query("chain_send_finish", FINISH, [id, "FAILED", reason, ["QUEUED", "SIGNED", "SENT", "MINED"]])).length > 0;
}

const WAITING = `UPDATE "chain_sends" SET "waitingFor" = $2, "updatedAt" = now() WHERE "id" = ANY($1::uuid[]) AND "status" = 'QUEUED'`;

export async function markWaiting(sql: Sql, ids: string[], reason: WaitingFor | null): Promise<void> {
  if (ids.length > 0) await sql.query("chain_sends_waiting", WAITING, [ids, reason]);
}

export type Outstanding = { tokenAddress: Address | null; amount: string; gasCost: string };

const OUTSTANDING = `
  SELECT "tokenAddress", sum("amount")::text AS "amount", coalesce(sum("gasLimit" * "maxFeePerGas"), 0)::text AS "gasCost"
  FROM "chain_sends" WHERE "chainId" = $1::int AND "fromAddress" = $2 AND "status" IN ('SIGNED', 'SENT') GROUP BY "tokenAddress"`;

/**
 * What `from` has signed and not yet seen mined, per token (null: native coin): the amounts and the
 * most their gas may cost. The balance the chain reports does not count them yet.
 */
export function outstandingFrom(sql: Sql, chainId: number, from: Address): Promise<Outstanding[]> {
  return sql.query<Outstanding>("chain_sends_outstanding", OUTSTANDING, [chainId, from]);
}

export type SendBacklog = {
  chainId: number;
  pending: number;
  oldestCreatedAt: Date | null;
  waitingTokens: number;
  waitingGas: number;
  unsweptDeposits: number;
  /** Sends a reorg deeper than the confirmation depth took off the chain after their confirmation, not yet confirmed again. */
  reorgedSends: number;
  /** ORPHANED sends: their nonce taken by a transaction the platform did not sign, waiting for the operator. */
  orphanedSends: number;
};

const BACKLOG = `
  SELECT c."chainId",
    (SELECT count(*)::int FROM "chain_sends" s WHERE s."chainId" = c."chainId" AND s."status" NOT IN ('CONFIRMED', 'FAILED', 'ORPHANED')) AS "pending",
    (SELECT min(s."createdAt") FROM "chain_sends" s WHERE s."chainId" = c."chainId" AND s."status" NOT IN ('CONFIRMED', 'FAILED', 'ORPHANED')) AS "oldestCreatedAt",
    (SELECT count(*)::int FROM "chain_sends" s WHERE s."chainId" = c."chainId" AND s."reorgedAt" IS NOT NULL AND s."status" NOT IN ('CONFIRMED', 'FAILED')) AS "reorgedSends",
    (SELECT count(*)::int FROM "chain_sends" s WHERE s."chainId" = c."chainId" AND s."status" = 'ORPHANED') AS "orphanedSends",
    (SELECT count(*)::int FROM "chain_sends" s WHERE s."chainId" = c."chainId" AND s."status" = 'QUEUED' AND s."waitingFor" = 'TOKENS') AS "waitingTokens",
    (SELECT count(*)::int FROM "chain_sends" s WHERE s."chainId" = c."chainId" AND s."status" = 'QUEUED' AND s."waitingFor" = 'GAS') AS "waitingGas",
    (SELECT count(*)::int FROM "chain_deposits" cd JOIN "deposits" d ON d."id" = cd."depositId"
       LEFT JOIN "chain_sends" sw ON sw."id" = cd."sweepId"
     WHERE cd."chainId" = c."chainId" AND d."status" = 'COMPLETED' AND (sw."id" IS NULL OR sw."status" <> 'CONFIRMED')) AS "unsweptDeposits"
  FROM unnest($1::int[]) AS c("chainId")`;

/** Per chain: sends not yet final (and the oldest one's age), those waiting for funds, and completed deposits not yet swept. */
export function sendBacklog(sql: Sql, chainIds: number[]): Promise<SendBacklog[]> {
  if (chainIds.length === 0) return Promise.resolve([]);
  return sql.query<SendBacklog>("chain_send_backlog", BACKLOG, [chainIds]);
}
