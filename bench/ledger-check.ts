import type { Decimal } from "decimal.js";
import { Exact } from "../src/money/amount.js";
import type { LedgerService } from "../src/ledger/service.js";

/**
 * After the journal runs: every user's chains verify (sequence, balances, hashes, balanced journals),
 * each user holds exactly the journals posted for it, every house shard chain verifies, and the house
 * account (the sum of its shards) mirrors them all.
 * Throws on any difference; returns the line to print.
 */
export async function checkLedger(
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
  const house = await ledger.verifyHouse(clientId);
  if (!house.valid) problems.push(`house accounts: ${house.chains.flatMap((c) => c.problems.map((p) => `${c.code}#${c.shard} ${p}`)).join("; ")}`);
  const settlement = house.chains.filter((chain) => chain.code === "PROVIDER_SETTLEMENT" && chain.currency === "USD");
  const houseEntries = settlement.reduce((sum, chain) => sum + chain.entries, 0);
  const houseBalance = await ledger.houseBalance(clientId, "PROVIDER_SETTLEMENT", "USD");
  if (houseEntries !== journals || !houseBalance.equals(amount.times(journals).negated())) {
    problems.push(`PROVIDER_SETTLEMENT USD: ${houseEntries} entries, balance ${houseBalance.toFixed()}; posted ${journals} journals`);
  }
  if (problems.length) throw new Error(`ledger verification failed:\n${problems.join("\n")}`);
  return (
    `Ledger verified after the run: ${journalsByUser.size} users, ${userEntries} user entries, every chain valid ` +
    `(sequence, balances, hashes, balanced journals); PROVIDER_SETTLEMENT USD in ${settlement.length} shard(s), every shard chain valid, ` +
    `${houseEntries} entries, balance (sum of shards) ${houseBalance.toFixed()}.`
  );
}
