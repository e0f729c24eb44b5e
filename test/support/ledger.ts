import { Decimal } from "decimal.js";
import { expect } from "vitest";
import type { TestServer } from "./server.js";

/**
 * Gives a user money through the real ledger (a DEPOSIT journal: user credit against provider
 * settlement), for tests that need a balance before any deposit flow runs.
 */
export async function fund(server: TestServer, clientId: string, userId: string, currency: string, amount: string) {
  const value = new Decimal(amount);
  await server.app.db.sql.transaction((tx) =>
    server.app.services.ledger.post(tx, {
      clientId,
      type: "DEPOSIT",
      postings: [
        { account: { userId, currency }, amount: value, type: "DEPOSIT" },
        { account: { system: "PROVIDER_SETTLEMENT", currency }, amount: value.negated(), type: "DEPOSIT" },
      ],
    }),
  );
}

/**
 * The ledger rules, checked after every money test: each of the client's journals sums to zero per
 * currency, the client's ledger as a whole sums to zero per currency, every user's chains and every
 * house shard's chain verify, and no user balance is below zero.
 */
export async function expectLedgerInvariants(server: TestServer, clientId: string) {
  const { prisma } = server.app.db;
  const unbalanced = await prisma.$queryRaw<{ journalId: string; currency: string; total: string }[]>`
    SELECT "journalId", "currency", SUM("amount")::text AS total FROM "ledger_entries"
    WHERE "clientId" = ${clientId}::uuid GROUP BY "journalId", "currency" HAVING SUM("amount") <> 0`;
  expect(unbalanced).toEqual([]);

  const totals = await prisma.ledgerEntry.groupBy({ by: ["currency"], where: { clientId }, _sum: { amount: true } });
  for (const total of totals) expect(`${total.currency} ${new Decimal(total._sum.amount!.toString()).toFixed()}`).toBe(`${total.currency} 0`);

  const accounts = await prisma.ledgerAccount.findMany({ where: { clientId, code: "USER" } });
  for (const account of accounts) expect(new Decimal(account.balance.toString()).isNegative()).toBe(false);

  for (const userId of new Set(accounts.map((account) => account.userId!))) {
    const report = await server.app.services.ledger.verify(clientId, userId);
    expect(report, `ledger of user ${userId}`).toMatchObject({ valid: true });
  }
  const house = await server.app.services.ledger.verifyHouse(clientId);
  expect(house.chains.flatMap((chain) => chain.problems.map((problem) => `${chain.code}#${chain.shard} ${chain.currency}: ${problem}`))).toEqual([]);
  expect(house.problems).toEqual([]);
}
