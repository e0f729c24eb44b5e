import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";
import { errorCodes, gql, rest, statusCounts } from "./support/http.js";
import { expectLedgerInvariants } from "./support/ledger.js";
import { needs, REQUIREMENTS } from "./support/requirements.js";
import { NGN_ACCOUNT, balanceOf, bankWithdrawalBody, fundedUser, WITHDRAWAL_MUTATIONS, type WithdrawalAction } from "./support/withdrawals.js";

// Helpers and withdrawals really run at once on PostgreSQL's pool; the embedded database runs one
// transaction at a time, so these are PostgreSQL's.
let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());


/** One helper over REST (even i) or GraphQL (odd i): two transports racing on one row. Answers "200 STATUS" or "409". */
async function helper(tenant: Tenant, reference: string, action: WithdrawalAction, i: number): Promise<string> {
  if (i % 2 === 0) {
    const res = await rest(server, "POST", `/v1/sandbox/withdrawals/${reference}/${action}`, { headers: tenant.headers });
    return res.status === 200 ? `200 ${res.body.status}` : String(res.status);
  }
  const res = await gql(server, `mutation ($r: ID!) { ${WITHDRAWAL_MUTATIONS[action]}(reference: $r) { status } }`, { r: reference }, tenant.headers);
  const record = res.body.data?.[WITHDRAWAL_MUTATIONS[action]];
  return record ? `200 ${record.status}` : errorCodes(res)[0] === "CONFLICT" ? "409" : JSON.stringify(res.body.errors);
}

async function ngnWithdrawal(tenant: Tenant, developerFee: number) {
  const userId = await fundedUser(server, tenant, "NGN", "1000");
  const res = await rest(server, "POST", "/v1/withdrawals/ngn", { headers: tenant.headers, body: { userId, amount: 400, developerFee, ...NGN_ACCOUNT } });
  expect(res.status).toBe(200);
  return { userId, reference: res.body.reference as string };
}

/** How many of each kind of thing the withdrawal caused: reversal journals and events per type. */
async function writesOf(tenant: Tenant, reference: string) {
  const { prisma } = server.app.db;
  const reversals = await prisma.ledgerJournal.count({ where: { referenceId: reference, type: "WITHDRAWAL_REVERSAL" } });
  const events = await prisma.event.groupBy({ by: ["type"], where: { clientId: tenant.clientId, type: { startsWith: "withdrawal." } }, _count: true });
  return { reversals, events: Object.fromEntries(events.map((e) => [e.type, e._count])) };
}

describe("withdrawal helpers racing", needs(REQUIREMENTS.postgres), () => {
  it("12 process/complete/fail at once on a PENDING withdrawal: one outcome, each change written once", async () => {
    const tenant = await newTenant(server);
    const { userId, reference } = await ngnWithdrawal(tenant, 10);
    const actions: WithdrawalAction[] = ["process", "complete", "fail"];
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => helper(tenant, reference, actions[i % 3], i)));

    const final = (await server.app.db.prisma.withdrawal.findUniqueOrThrow({ where: { reference } })).status;
    expect(["COMPLETED", "FAILED"]).toContain(final);
    for (const result of results) expect(["409", "200 PROCESSING", `200 ${final}`]).toContain(result);
    // Each status is reached once: at most one answer per status, and a repeat of it is a 409.
    expect(results.filter((result) => result === `200 ${final}`)).toHaveLength(1);
    expect(results.filter((result) => result === "200 PROCESSING").length).toBeLessThanOrEqual(1);
    const { reversals, events } = await writesOf(tenant, reference);
    expect(reversals).toBe(final === "FAILED" ? 1 : 0);
    for (const count of Object.values(events)) expect(count).toBe(1);
    expect(events[final === "FAILED" ? "withdrawal.failed" : "withdrawal.completed"]).toBe(1);
    expect(await balanceOf(server, tenant, userId, "NGN")).toBe(final === "FAILED" ? "1000" : "590");
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it("10 returns and fails at once on a COMPLETED withdrawal: one return, one reversal of the amount only, every other helper refused", async () => {
    const tenant = await newTenant(server);
    const { userId, reference } = await ngnWithdrawal(tenant, 10);
    expect(await helper(tenant, reference, "complete", 0)).toBe("200 COMPLETED");
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => helper(tenant, reference, i % 4 === 3 ? "fail" : "return", i)));

    expect(results.filter((_, i) => i % 4 === 3)).toEqual(["409", "409"]);
    expect([...results].sort()).toEqual(["200 RETURNED", ...Array(9).fill("409")]);
    const { reversals, events } = await writesOf(tenant, reference);
    expect(reversals).toBe(1);
    expect(events["withdrawal.returned"]).toBe(1);
    expect(await balanceOf(server, tenant, userId, "NGN")).toBe("990");
    const revenue = await rest(server, "GET", "/v1/balances", { headers: tenant.headers });
    expect(revenue.body.balances).toEqual([{ currency: "NGN", posted: 10, pending: 10, available: 10, livemode: false }]);
    await expectLedgerInvariants(server, tenant.clientId);
  });
});

describe("withdrawals with a developer fee racing", needs(REQUIREMENTS.postgres), () => {
  it("20 at once against a balance covering 6 of amount + developerFee: exactly 6 succeed, revenue 6 fees, the balance the exact remainder", async () => {
    const tenant = await newTenant(server);
    // Each costs 10.01 + 2.5 = 12.51: 80 covers 6 (75.06), leaving 4.94; without the fee it would cover 7.
    const userId = await fundedUser(server, tenant, "USD", "80");
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        i % 2 === 0
          ? rest(server, "POST", "/v1/withdrawal/usd", { headers: tenant.headers, body: { ...bankWithdrawalBody(userId, "USD", 10.01), developerFee: 2.5 } })
          : gql(
              server,
              `mutation ($input: WithdrawToBankInput!) { withdrawToBank(input: $input) { reference } }`,
              { input: { currency: "USD", ...bankWithdrawalBody(userId, "USD", "10.01"), developerFee: "2.5" } },
              tenant.headers,
            ).then((res) => ({ status: res.body.data?.withdrawToBank ? 200 : errorCodes(res)[0] === "INSUFFICIENT_FUNDS" ? 500 : 0 })),
      ),
    );

    expect(statusCounts(results)).toEqual({ 200: 6, 500: 14 });
    expect(await balanceOf(server, tenant, userId, "USD")).toBe("4.94");
    expect(await server.app.db.prisma.withdrawal.count({ where: { userId } })).toBe(6);
    const revenue = await rest(server, "GET", "/v1/balances", { headers: tenant.headers });
    expect(revenue.body.balances).toEqual([{ currency: "USD", posted: 15, pending: 15, available: 15, livemode: false }]);
    await expectLedgerInvariants(server, tenant.clientId);
  });
});
