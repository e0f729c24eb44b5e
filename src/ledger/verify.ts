import type { PrismaClient } from "../generated/prisma/client.js";
import { Exact } from "./amount.js";
import { entryHash } from "./hash.js";

export type ChainReport = { currency: string; entries: number; balance: string; valid: boolean; problems: string[] };
export type LedgerVerification = { valid: boolean; chains: ChainReport[] };

/**
 * Recomputes each of a user's balance chains from the first entry: contiguous sequence numbers,
 * balanceBefore equal to the previous balanceAfter, balanceAfter = balanceBefore + amount, every
 * hash recomputed from the content and the previous hash, the stored balance equal to the chain's
 * end; and every journal the user takes part in balanced per currency.
 */
export async function verifyUserLedger(prisma: PrismaClient, clientId: string, userId: string): Promise<LedgerVerification> {
  const accounts = await prisma.ledgerAccount.findMany({
    where: { clientId, userId },
    include: { entries: { orderBy: { sequence: "asc" } } },
    orderBy: { currency: "asc" },
  });
  const chains = accounts.map((account) => {
    const problems: string[] = [];
    let previousHash: string | null = null;
    let running = new Exact(0);
    account.entries.forEach((entry, index) => {
      const at = `entry ${entry.sequence}`;
      if (entry.sequence !== index + 1) problems.push(`${at}: sequence should be ${index + 1}`);
      if (!new Exact(entry.balanceBefore.toString()).equals(running)) problems.push(`${at}: balanceBefore does not continue the chain`);
      const after = new Exact(entry.balanceBefore.toString()).plus(entry.amount.toString());
      if (!after.equals(entry.balanceAfter.toString())) problems.push(`${at}: balanceAfter ≠ balanceBefore + amount`);
      if (after.isNegative()) problems.push(`${at}: balance below zero`);
      if (entry.prevHash !== previousHash) problems.push(`${at}: prevHash does not match the previous entry`);
      if (entryHash(previousHash, { ...entry, amount: entry.amount.toString(), balanceBefore: entry.balanceBefore.toString(), balanceAfter: entry.balanceAfter.toString() }) !== entry.hash) {
        problems.push(`${at}: hash does not match its content`);
      }
      previousHash = entry.hash;
      running = new Exact(entry.balanceAfter.toString());
    });
    if (!running.equals(account.balance.toString())) problems.push("stored balance differs from the end of the chain");
    if (account.lastEntryHash !== previousHash) problems.push("stored last hash differs from the end of the chain");
    return { currency: account.currency, entries: account.entries.length, balance: running.toFixed(), valid: problems.length === 0, problems };
  });
  const unbalanced = await prisma.$queryRaw<{ journalId: string; currency: string }[]>`
    SELECT e."journalId", e."currency" FROM "ledger_entries" e
    WHERE e."journalId" IN (SELECT "journalId" FROM "ledger_entries" WHERE "userId" = ${userId}::uuid AND "clientId" = ${clientId}::uuid)
    GROUP BY e."journalId", e."currency" HAVING SUM(e."amount") <> 0`;
  for (const { journalId, currency } of unbalanced) {
    const chain = chains.find((c) => c.currency === currency);
    const problem = `journal ${journalId} is not balanced in ${currency}`;
    if (chain) {
      chain.problems.push(problem);
      chain.valid = false;
    }
  }
  return { valid: chains.every((c) => c.valid) && unbalanced.length === 0, chains };
}
