import type { PrismaClient } from "../generated/prisma/client.js";

export type Tx = Parameters<Parameters<PrismaClient["$transaction"]>[0]>[0];

/**
 * An interactive transaction with waits sized for money paths under load: a journal that queues
 * behind others for its row locks must not fail for impatience.
 */
export const TRANSACTION_WAITS = { maxWait: 20_000, timeout: 30_000 };

export function inTransaction<T>(prisma: PrismaClient, work: (tx: Tx) => Promise<T>): Promise<T> {
  return prisma.$transaction(work, TRANSACTION_WAITS);
}
