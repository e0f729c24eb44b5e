import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, newTenant, type TestServer } from "./support/server.js";
import { createUser, rest, statusCounts } from "./support/http.js";
import { expectLedgerInvariants, fund } from "./support/ledger.js";

// On PostgreSQL (TEST_DATABASE_URL) these requests really run at once on a pool of connections;
// on the embedded database they are serialised, which checks the same outcome.
let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

describe("a balance under parallel spending", () => {
  it("50 parallel conversions against a balance that covers 10: exactly 10 succeed, the rest is exact", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    await fund(server, tenant.clientId, userId, "USD", "105.50");

    const results = await Promise.all(
      Array.from({ length: 50 }, () => rest(server, "POST", "/v1/conversion", { headers: tenant.headers, body: { userId, from: "USD", to: "EUR", amount: 10 } })),
    );

    expect(statusCounts(results)).toEqual({ 200: 10, 400: 40 });
    for (const refused of results.filter((r) => r.status === 400)) expect(refused.body.error).toMatch(/insufficient funds/i);
    expect((await server.app.services.ledger.balance(tenant.clientId, userId, "USD")).toFixed()).toBe("5.5");
    // Each: (10 − 0.01 fee) × 0.9168925 = 9.1597560… → 9.15 EUR
    for (const converted of results.filter((r) => r.status === 200)) expect(converted.body.convertedAmount).toBe(9.15);
    expect((await server.app.services.ledger.balance(tenant.clientId, userId, "EUR")).toFixed()).toBe("91.5");
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it("parallel first conversions in opposite directions open the new FX accounts without a deadlock", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    await fund(server, tenant.clientId, userId, "USD", "100");
    await fund(server, tenant.clientId, userId, "EUR", "100");

    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => {
        const [from, to] = i % 2 ? ["USD", "EUR"] : ["EUR", "USD"];
        return rest(server, "POST", "/v1/conversion", { headers: tenant.headers, body: { userId, from, to, amount: 1 } });
      }),
    );

    expect(statusCounts(results)).toEqual({ 200: 20 });
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it("card debits and conversions racing for one USD balance never take it below zero", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    expect((await rest(server, "GET", `/v1/virtual-cards/${userId}`, { headers: tenant.headers })).status).toBe(200);
    await fund(server, tenant.clientId, userId, "USD", "60");

    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        i % 2
          ? rest(server, "POST", "/v1/conversion", { headers: tenant.headers, body: { userId, from: "USD", to: "GBP", amount: 5 } })
          : rest(server, "POST", "/v1/sandbox/card-transactions", { headers: tenant.headers, body: { userId, amount: 5, description: "Parallel shop" } }),
      ),
    );

    expect(statusCounts(results)).toEqual({ 200: 12, 400: 18 });
    expect((await server.app.services.ledger.balance(tenant.clientId, userId, "USD")).toFixed()).toBe("0");
    // Every settled card debit carries the balance its own journal left, so the balances are distinct.
    const cardBalances = results.filter((r, i) => r.status === 200 && i % 2 === 0).map((r) => r.body.balance);
    expect(new Set(cardBalances).size).toBe(cardBalances.length);
    await expectLedgerInvariants(server, tenant.clientId);
  });
});
