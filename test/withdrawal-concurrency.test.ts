import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newTenant, startServer, type TestServer } from "./support/server.js";
import { rest, statusCounts } from "./support/http.js";
import { expectLedgerInvariants } from "./support/ledger.js";
import { balanceOf, bankWithdrawalBody, fundedUser } from "./support/withdrawals.js";

// On PostgreSQL (TEST_DATABASE_URL) these requests really run at once on a pool of connections;
// on the embedded database they are serialised, which checks the same outcome.
let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

describe("withdrawals under concurrency", () => {
  it("20 parallel withdrawals against a balance covering 7: exactly 7 succeed, the balance ends at the exact remainder", async () => {
    const tenant = await newTenant(server);
    const userId = await fundedUser(server, tenant, "USD", "75.37");

    const results = await Promise.all(
      Array.from({ length: 20 }, () => rest(server, "POST", "/v1/withdrawal/usd", { headers: tenant.headers, body: bankWithdrawalBody(userId, "USD", 10.01) })),
    );

    expect(statusCounts(results)).toEqual({ 200: 7, 500: 13 });
    for (const refused of results.filter((r) => r.status === 500)) expect(refused.body.error).toMatch(/insufficient funds/i);
    expect(await balanceOf(server, tenant, userId, "USD")).toBe("5.3");
    const references = results.filter((r) => r.status === 200).map((r) => r.body.reference);
    expect(new Set(references).size).toBe(7);
    expect(await server.app.db.prisma.withdrawal.count({ where: { userId } })).toBe(7);
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it("racing fails and completes of one withdrawal: one wins, a failure is reversed exactly once", async () => {
    const tenant = await newTenant(server);
    const userId = await fundedUser(server, tenant, "EUR", "50");
    const { body } = await rest(server, "POST", "/v1/withdrawal/eur", { headers: tenant.headers, body: bankWithdrawalBody(userId, "EUR", 20) });

    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        rest(server, "POST", `/v1/sandbox/withdrawals/${body.reference}/${i % 3 === 0 ? "complete" : "fail"}`, { headers: tenant.headers }),
      ),
    );

    const final = (await rest(server, "GET", `/v1/withdrawals/${body.reference}`, { headers: tenant.headers })).body.status;
    expect(["COMPLETED", "FAILED"]).toContain(final);
    // One transition is made: its caller sees it, every other caller a 409 (the opposite, or the same again).
    expect(results.map((r) => r.status).sort()).toEqual([200, ...Array(9).fill(409)]);
    expect(results.find((r) => r.status === 200)!.body.status).toBe(final);
    expect(await balanceOf(server, tenant, userId, "EUR")).toBe(final === "FAILED" ? "50" : "30");
    const reversals = await server.app.db.prisma.ledgerEntry.count({ where: { referenceId: body.reference, type: "WITHDRAWAL_REVERSAL", userId } });
    expect(reversals).toBe(final === "FAILED" ? 1 : 0);
    await expectLedgerInvariants(server, tenant.clientId);
  });
});
