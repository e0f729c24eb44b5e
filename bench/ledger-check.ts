import type { Decimal } from "decimal.js";
import type { PrismaClient } from "../src/generated/prisma/client.js";
import { Exact } from "../src/ledger/amount.js";
import type { LedgerService } from "../src/ledger/service.js";

/**
 * After the journal runs: every user's chains verify (sequence, balances, hashes, balanced journals),
 * each user holds exactly the journals posted for it, and the shared system account mirrors them all.
 * Throws on any difference; returns the line to print.
 */
export async function checkLedger(
  prisma: PrismaClient,
  ledger: LedgerService,
  clientId: string,
  journalsByUser: Map<string, number>,
  amount: Decimal,
): Promise<string> {
  const problems: string[] = [];
  let userEntries = 0;
  for (const [userId, journals] of journalsByUser) {
    const report = await ledger.verify(clientId, userId);
    if (!report.valid) problems.push(`user ${userId}: ${report.chains.flatMap((c) => c.problems).join("; ")}`);
    const usd = report.chains.find((chain) => chain.currency === "USD");
    userEntries += usd?.entries ?? 0;
    if (usd?.entries !== journals || !new Exact(usd.balance).equals(amount.times(journals))) {
      problems.push(`user ${userId}: ${usd?.entries ?? 0} entries, balance ${usd?.balance ?? 0}; posted ${journals} journals`);
    }
  }
  const journals = [...journalsByUser.values()].reduce((sum, n) => sum + n, 0);
  const system = await prisma.ledgerAccount.findFirst({ where: { clientId, userId: null, code: "PROVIDER_SETTLEMENT", currency: "USD" } });
  const systemBalance = new Exact(system?.balance.toString() ?? 0);
  if (system?.entryCount !== journals || !systemBalance.equals(amount.times(journals).negated())) {
    problems.push(`PROVIDER_SETTLEMENT USD: ${system?.entryCount ?? 0} entries, balance ${systemBalance.toFixed()}; posted ${journals} journals`);
  }
  if (problems.length) throw new Error(`ledger verification failed:\n${problems.join("\n")}`);
  return (
    `Ledger verified after the run: ${journalsByUser.size} users, ${userEntries} user entries, every chain valid ` +
    `(sequence, balances, hashes, balanced journals); PROVIDER_SETTLEMENT USD holds ${journals} entries, balance ${systemBalance.toFixed()}.`
  );
}
