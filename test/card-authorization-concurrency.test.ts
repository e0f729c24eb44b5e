import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, testDatabaseUrl, type TestServer } from "./support/server.js";
import { rest, statusCounts } from "./support/http.js";
import { expectLedgerInvariants } from "./support/ledger.js";
import { needs, REQUIREMENTS } from "./support/requirements.js";
import { authorize, capture, cardholder, reverse, usdBalances } from "./support/cards.js";
import { bankWithdrawalBody } from "./support/withdrawals.js";

// Requests really run at once on a pool of connections: only PostgreSQL shows what the locks do.
let server: TestServer;
beforeAll(async () => {
  // An hour: the expiry these tests run by hand reaches their own authorizations and none of other files' (7 days).
  if (!REQUIREMENTS.postgres) server = await startServer({ env: { CARD_AUTHORIZATION_TTL: "1h" } });
});
afterAll(() => server?.stop());

/** When the last of these authorizations falls due: an expiry run "at" it reaches them. */
async function dueTime(ids: string[]): Promise<Date> {
  const rows = await server.app.db.prisma.cardAuthorization.findMany({ where: { id: { in: ids } }, select: { expiresAt: true } });
  return new Date(Math.max(...rows.map((row) => row.expiresAt.getTime())));
}

const statusesOf = (results: { body: { status?: string } }[]) =>
  results.reduce<Record<string, number>>((counts, r) => ({ ...counts, [r.body.status ?? "none"]: (counts[r.body.status ?? "none"] ?? 0) + 1 }), {});

describe("holds under concurrency", needs(REQUIREMENTS.postgres), () => {
  it("20 parallel authorizations against an available covering 7: exactly 7 hold, 13 are declined, available ends at the exact rest", async () => {
    const { tenant, userId } = await cardholder(server, "75.37");
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => authorize(server, tenant, { userId, amount: 10.01, merchant: `shop ${i}` })));
    expect(statusCounts(results)).toEqual({ 200: 20 });
    expect(statusesOf(results)).toEqual({ PENDING: 7, DECLINED: 13 });
    expect(await usdBalances(server, tenant, userId)).toEqual({ currency: "USD", posted: 75.37, pending: 5.3, available: 5.3 });
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it("while a hold exists, 20 parallel withdrawals against an available covering 5: exactly 5 succeed", async () => {
    const { tenant, userId } = await cardholder(server, "100");
    expect((await authorize(server, tenant, { userId, amount: 40, merchant: "Hotel" })).body.status).toBe("PENDING");
    const results = await Promise.all(
      Array.from({ length: 20 }, () => rest(server, "POST", "/v1/withdrawal/usd", { headers: tenant.headers, body: bankWithdrawalBody(userId, "USD", 10.01) })),
    );
    expect(statusCounts(results)).toEqual({ 200: 5, 500: 15 });
    for (const refused of results.filter((r) => r.status === 500)) expect(refused.body.details).toMatch(/^USD available balance .* \(balance .*, held 40\) is less than 10.01$/);
    expect(await usdBalances(server, tenant, userId)).toEqual({ currency: "USD", posted: 49.95, pending: 9.95, available: 9.95 });
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it("while a hold exists, conversions, card debits and authorizations racing for one USD balance never take available below zero", async () => {
    const { tenant, userId } = await cardholder(server, "100");
    expect((await authorize(server, tenant, { userId, amount: 40, merchant: "Hotel" })).body.status).toBe("PENDING");
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        i % 3 === 0
          ? rest(server, "POST", "/v1/conversion", { headers: tenant.headers, body: { userId, from: "USD", to: "EUR", amount: 5 } })
          : i % 3 === 1
          ? rest(server, "POST", "/v1/sandbox/card-transactions", { headers: tenant.headers, body: { userId, amount: 5, description: "Parallel shop" } })
          : authorize(server, tenant, { userId, amount: 5, merchant: "Parallel hold" }),
      ),
    );
    // 60 available, 5 each: exactly 12 of the 30 spends get through, whatever their kind.
    const spent = results.filter((r) => r.status === 200 && r.body.status !== "DECLINED").length;
    expect(spent).toBe(12);
    expect(results.every((r) => r.status === 200 || (r.status === 400 && /insufficient funds/i.test(r.body.error)))).toBe(true);
    expect(await usdBalances(server, tenant, userId)).toMatchObject({ available: 0 });
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it("two captures of one authorization at once: one wins, the other is 409, one debit is posted", async () => {
    const { tenant, userId } = await cardholder(server, "100");
    for (let round = 0; round < 5; round++) {
      const { body: held } = await authorize(server, tenant, { userId, amount: 10, merchant: `round ${round}` });
      const results = await Promise.all([capture(server, tenant, held.id), capture(server, tenant, held.id, { amount: 4 })]);
      expect(statusCounts(results)).toEqual({ 200: 1, 409: 1 });
      expect(await server.app.db.prisma.ledgerEntry.count({ where: { referenceId: held.id, userId } })).toBe(1);
    }
    expect(await usdBalances(server, tenant, userId)).toMatchObject({ available: (await usdBalances(server, tenant, userId))!.posted });
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it("captures, reversals and the expiry racing for the same authorizations: one wins each, the hold is released once", async () => {
    const { tenant, userId } = await cardholder(server, "100");
    const held = await Promise.all(Array.from({ length: 8 }, (_, i) => authorize(server, tenant, { userId, amount: 10, merchant: `race ${i}` })));
    const ids = held.map((r) => r.body.id as string);
    // The expiry runs as if these were past their TTL, while captures and reversals come in.
    const [, ...results] = await Promise.all([
      server.app.services.cardAuthorizationExpiry.runOnce(await dueTime(ids)),
      ...ids.flatMap((id) => [capture(server, tenant, id), reverse(server, tenant, id), capture(server, tenant, id, { amount: 1 })]),
    ]);
    expect(results.every((r) => r.status === 200 || r.status === 409)).toBe(true);
    const finals = await server.app.db.prisma.cardAuthorization.findMany({ where: { id: { in: ids } } });
    for (const authorization of finals) {
      const wins = results.filter((r) => r.status === 200 && r.body.id === authorization.id);
      expect(wins.length).toBeLessThanOrEqual(1);
      expect(["CAPTURED", "REVERSED", "EXPIRED"]).toContain(authorization.status);
      if (wins.length) expect(wins[0].body.status).toBe(authorization.status);
      const debits = await server.app.db.prisma.ledgerEntry.count({ where: { referenceId: authorization.id, userId } });
      expect(debits).toBe(authorization.status === "CAPTURED" ? 1 : 0);
    }
    const balances = (await usdBalances(server, tenant, userId))!;
    expect(balances.available).toBe(balances.posted);
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it("the expiry runs on one instance at a time: while another holds its lock, nothing expires here", async () => {
    const { tenant, userId } = await cardholder(server, "100");
    const { body: held } = await authorize(server, tenant, { userId, amount: 10, merchant: "Hotel" });
    const future = await dueTime([held.id]);
    const other = new pg.Client({ connectionString: testDatabaseUrl });
    await other.connect();
    try {
      await other.query("BEGIN");
      await other.query("SELECT pg_advisory_xact_lock(7318204462)");
      expect(await server.app.services.cardAuthorizationExpiry.runOnce(future)).toBeNull();
      expect((await server.app.db.prisma.cardAuthorization.findUniqueOrThrow({ where: { id: held.id } })).status).toBe("PENDING");
      await other.query("COMMIT");
      expect(await server.app.services.cardAuthorizationExpiry.runOnce(future)).toBeGreaterThanOrEqual(1);
      expect((await server.app.db.prisma.cardAuthorization.findUniqueOrThrow({ where: { id: held.id } })).status).toBe("EXPIRED");
    } finally {
      await other.end();
    }
    await expectLedgerInvariants(server, tenant.clientId);
  });
});
