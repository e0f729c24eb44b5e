import type { Sql } from "../db/sql.js";
import { Prisma, type Deposit } from "../generated/prisma/client.js";
import type { IncomingDeposit } from "../ledger/deposit-types.js";

// The deposit rows of the webhook transaction (see WebhookService.receive) and the hot read, as plain SQL.

const COLUMNS = `"id", "clientId", "userId", "virtualAccountId", "provider", "eventId", "amount"::text AS "amount", "currency", "status",
  "paymentReference", "tokenAddress", "transactionHash", "chainId", "failureReason", "settleAt", "createdAt", "updatedAt"`;

type DepositRow = Omit<Deposit, "amount"> & { amount: string };

/** A row as Prisma would have returned it (the amount a Decimal). */
const asDeposit = (row: DepositRow): Deposit => ({ ...row, amount: new Prisma.Decimal(row.amount) });

const INSERT = `
  INSERT INTO "deposits" ("id", "clientId", "userId", "virtualAccountId", "provider", "eventId", "amount", "currency", "status",
                          "paymentReference", "tokenAddress", "transactionHash", "chainId", "settleAt", "createdAt", "updatedAt")
  VALUES ($1::uuid, $2::uuid, $3::uuid, $4::uuid, $5, $6, $7::numeric, $8, $9, $10, $11, $12, $13::int, $14::timestamptz, $15::timestamptz, $15::timestamptz)
  ON CONFLICT DO NOTHING
  RETURNING ${COLUMNS}`;

/** Inserts the deposit; undefined when the provider's reference is already known. */
export async function insertDeposit(tx: Sql, id: string, incoming: IncomingDeposit, status: string, settleAt: Date | null): Promise<Deposit | undefined> {
  const { provider, eventId, clientId, userId, amount, currency } = incoming;
  const [row] = await tx.query<DepositRow>("deposit_insert", INSERT, [
    ...[id, clientId, userId, incoming.virtualAccountId ?? null, provider, eventId, amount.toFixed(), currency, status],
    ...[incoming.paymentReference ?? null, incoming.tokenAddress ?? null, incoming.transactionHash ?? null, incoming.chainId ?? null],
    ...[settleAt, new Date()],
  ]);
  return row && asDeposit(row);
}

/**
 * Where a virtual account deposit goes, the user's own wallet address, and the client's developer fee
 * on it in percent (null for an on-chain deposit).
 */
export type Destination = { destinationAsset: string; destinationNetwork: string; destinationAddress: string; walletAddress: string | null; developerFeePercent: string };

type MovedRow = DepositRow & {
  destinationAsset: string | null;
  destinationNetwork: string | null;
  destinationAddress: string | null;
  walletAddress: string | null;
  developerFeePercent: string | null;
};

const MOVE = `
  WITH "moved" AS (
    UPDATE "deposits" SET "status" = $4, "failureReason" = coalesce($5::text, "failureReason"), "settleAt" = NULL, "updatedAt" = $6::timestamptz
    WHERE "provider" = $1 AND "eventId" = $2 AND "status" = $3
    RETURNING ${COLUMNS}
  )
  SELECT "moved".*, va."destinationAsset", va."destinationNetwork", va."destinationAddress", va."developerFeePercent"::text AS "developerFeePercent", w."address" AS "walletAddress"
  FROM "moved"
  LEFT JOIN "virtual_accounts" va ON va."id" = "moved"."virtualAccountId" AND va."clientId" = "moved"."clientId" AND va."userId" = "moved"."userId"
  LEFT JOIN "wallets" w ON w."userId" = "moved"."userId" AND w."clientId" = "moved"."clientId"`;

/**
 * from → to, only when the deposit is in `from`; undefined otherwise. A virtual account deposit comes
 * with its destination (what its settlement needs), read in the same statement.
 */
export async function moveDeposit(tx: Sql, provider: string, reference: string, from: string, to: { status: string; failureReason?: string }) {
  const [row] = await tx.query<MovedRow>("deposit_move", MOVE, [provider, reference, from, to.status, to.failureReason ?? null, new Date()]);
  if (!row) return undefined;
  const { destinationAsset, destinationNetwork, destinationAddress, walletAddress, developerFeePercent, ...deposit } = row;
  const destination =
    destinationAsset === null || destinationAddress === null || destinationNetwork === null
      ? null
      : { destinationAsset, destinationNetwork, destinationAddress, walletAddress, developerFeePercent: developerFeePercent ?? "0" };
  return { deposit: asDeposit(deposit), destination };
}

const EXISTS = `SELECT 1 FROM "deposits" WHERE "provider" = $1 AND "eventId" = $2`;

export async function depositExists(tx: Sql, provider: string, reference: string): Promise<boolean> {
  return (await tx.query("deposit_exists", EXISTS, [provider, reference])).length > 0;
}

const BY_ID = `SELECT ${COLUMNS} FROM "deposits" WHERE "id" = $1::uuid AND "clientId" = $2::uuid`;

/** The client's deposit, read by a prepared statement (the hot read of every completion and every update sent). */
export async function depositById(sql: Sql, clientId: string, id: string): Promise<Deposit | undefined> {
  const [row] = await sql.query<DepositRow>("deposit_by_id", BY_ID, [id, clientId]);
  return row && asDeposit(row);
}

const DUE = `SELECT "id", "provider", "eventId" FROM "deposits"
  WHERE "status" = $1 AND "settleAt" <= $2::timestamptz ORDER BY "settleAt" LIMIT $3::int`;

/** Deposits in `status` whose settle time has come, oldest first (the sandbox settler's poll, several times a second). */
export function dueDeposits(sql: Sql, status: string, now: Date, take: number) {
  return sql.query<{ id: string; provider: string; eventId: string }>("deposits_due", DUE, [status, now, take]);
}
