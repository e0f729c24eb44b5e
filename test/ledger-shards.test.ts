import { Decimal } from "decimal.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HOUSE_SHARDS } from "../src/ledger/shards.js";
import { startServer, newTenant, type TestServer } from "./support/server.js";
import { needs, REQUIREMENTS } from "./support/requirements.js";
import { createUser, rest, statusCounts } from "./support/http.js";
import { simulateDeposit } from "./support/deposits.js";
import { expectLedgerInvariants, fund } from "./support/ledger.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

const ledger = () => server.app.services.ledger;

/** The house chains of one (code, currency), the shards that hold entries only. */
async function houseChains(clientId: string, code: string, currency: string) {
  const house = await ledger().verifyHouse(clientId);
  return house.chains.filter((chain) => chain.code === code && chain.currency === currency);
}

describe("house accounts split into shards", () => {
  it("spreads the users' journals over shards whose chains all verify; the house balance is their sum", async () => {
    const tenant = await newTenant(server);
    const users = await Promise.all(Array.from({ length: 12 }, () => createUser(server, tenant)));
    for (const [i, userId] of users.entries()) await fund(server, tenant.clientId, userId, "USD", String(i + 1));
    const conversion = await rest(server, "POST", "/v1/conversion", { headers: tenant.headers, body: { userId: users[11], from: "USD", to: "EUR", amount: 10 } });
    expect(conversion.status).toBe(200);

    const house = await ledger().verifyHouse(tenant.clientId);
    expect(house.valid).toBe(true);
    const settlement = house.chains.filter((chain) => chain.code === "PROVIDER_SETTLEMENT" && chain.currency === "USD");
    expect(settlement.length).toBeGreaterThan(1);
    for (const chain of settlement) expect(chain.shard).toBeLessThan(HOUSE_SHARDS);
    expect(settlement.reduce((sum, chain) => sum + chain.entries, 0)).toBe(12);
    const total = settlement.reduce((sum, chain) => sum.plus(chain.balance), new Decimal(0));
    expect(total.toFixed()).toBe("-78"); // 1 + 2 + … + 12
    expect((await ledger().houseBalance(tenant.clientId, "PROVIDER_SETTLEMENT", "USD")).toFixed()).toBe("-78");
    expect(house.balances).toEqual(
      expect.arrayContaining([
        { code: "PROVIDER_SETTLEMENT", currency: "USD", shards: settlement.length, balance: "-78" },
        { code: "FX", currency: "USD", shards: 1, balance: "9.99" },
        { code: "FEES", currency: "USD", shards: 1, balance: "0.01" },
      ]),
    );
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it("keeps every journal of one user on one shard", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    for (const amount of ["1", "2", "3"]) await fund(server, tenant.clientId, userId, "USD", amount);
    expect((await houseChains(tenant.clientId, "PROVIDER_SETTLEMENT", "USD")).map((chain) => chain.entries)).toEqual([3]);
  });

  it("detects a house entry changed in the database", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    await fund(server, tenant.clientId, userId, "USD", "10");
    const { prisma } = server.app.db;
    await prisma.$transaction([
      prisma.$executeRawUnsafe(`ALTER TABLE ledger_entries DISABLE TRIGGER ledger_entries_append_only`),
      prisma.$executeRaw`UPDATE ledger_entries SET amount = -1, "balanceAfter" = -1 WHERE "clientId" = ${tenant.clientId}::uuid AND "userId" IS NULL`,
      prisma.$executeRawUnsafe(`ALTER TABLE ledger_entries ENABLE TRIGGER ledger_entries_append_only`),
    ]);
    const house = await ledger().verifyHouse(tenant.clientId);
    expect(house.valid).toBe(false);
    expect(house.chains[0].problems).toEqual(
      expect.arrayContaining([expect.stringMatching(/entry 1: hash does not match/), "stored balance differs from the end of the chain"]),
    );
  });

  // Only PostgreSQL runs these completions at once on a pool of connections (the embedded database serialises them).
  it("200 deposits of 20 users completed at once: every chain verifies and the sums are exact", { ...needs(REQUIREMENTS.postgres), timeout: 120_000 }, async () => {
    const tenant = await newTenant(server);
    const users = await Promise.all(Array.from({ length: 20 }, () => createUser(server, tenant)));
    const deposits: { id: string; userId: string }[] = [];
    for (let round = 0; round < 10; round++) {
      deposits.push(...(await Promise.all(users.map((userId) => simulateDeposit(server, tenant, { userId, currency: "USDC", amount: "1.5" })))));
    }

    const results = await Promise.all(deposits.map(({ id }) => rest(server, "POST", `/v1/sandbox/deposits/${id}/complete`, { headers: tenant.headers })));

    expect(statusCounts(results)).toEqual({ 200: 200 });
    for (const userId of users) expect((await ledger().balance(tenant.clientId, userId, "USDC")).toFixed()).toBe("15");
    const chains = await houseChains(tenant.clientId, "ONCHAIN_SETTLEMENT", "USDC");
    expect(chains.length).toBeGreaterThan(1);
    expect(chains.reduce((sum, chain) => sum + chain.entries, 0)).toBe(200);
    expect((await ledger().houseBalance(tenant.clientId, "ONCHAIN_SETTLEMENT", "USDC")).toFixed()).toBe("-300");
    await expectLedgerInvariants(server, tenant.clientId);
  });
});
