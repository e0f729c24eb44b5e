import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newTenant, startServer, type TestServer } from "./support/server.js";
import { createUser, gql, rest } from "./support/http.js";
import { expectLedgerInvariants, fund } from "./support/ledger.js";
import { newVirtualAccount, simulateDeposit } from "./support/deposits.js";
import { authorize, cardholder } from "./support/cards.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

const BALANCES = `query ($id: ID!) { user(id: $id) { balances { currency balance posted pending available } } }`;

/** A user with 100 USD posted, 30 of it held by a card authorization, and 500 NGN on the way (a PENDING deposit, no NGN account yet). */
async function userWithHoldAndPendingDeposit() {
  const { tenant, userId } = await cardholder(server, "100");
  await newVirtualAccount(server, tenant, userId, "ngn");
  const deposit = await simulateDeposit(server, tenant, { userId, currency: "NGN", amount: 500 });
  expect(deposit.status).toBe("PENDING");
  const hold = await authorize(server, tenant, { userId, amount: 30, merchant: "Hotel" });
  expect(hold.body.status).toBe("PENDING");
  return { tenant, userId };
}

describe("the three balances", () => {
  it("REST GET /v1/balances/{userId}: posted is the ledger, pending adds PENDING deposits and takes off holds, available is posted less holds", async () => {
    const { tenant, userId } = await userWithHoldAndPendingDeposit();
    const res = await rest(server, "GET", `/v1/balances/${userId}`, { headers: tenant.headers });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      userId,
      balances: [
        { currency: "NGN", posted: 0, pending: 500, available: 0, livemode: false },
        { currency: "USD", posted: 100, pending: 70, available: 70, livemode: false },
      ],
    });
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it("GraphQL User.balances: the same three as exact decimals, balance still the posted one", async () => {
    const { tenant, userId } = await userWithHoldAndPendingDeposit();
    const res = await gql(server, BALANCES, { id: userId }, tenant.headers);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.user.balances).toEqual([
      { currency: "NGN", balance: "0", posted: "0", pending: "500", available: "0" },
      { currency: "USD", balance: "100", posted: "100", pending: "70", available: "70" },
    ]);
  });

  it("REST GET /v1/accounts/{currency}/{userId} keeps balance (posted) and adds the three; GraphQL accountBalance too", async () => {
    const { tenant, userId } = await userWithHoldAndPendingDeposit();
    const usd = await rest(server, "GET", `/v1/accounts/usd/${userId}`, { headers: tenant.headers });
    expect(usd.status).toBe(200);
    expect(usd.body).toEqual({ currency: "USD", balance: 100, posted: 100, pending: 70, available: 70, virtualAccount: null, livemode: false });
    const ngn = await rest(server, "GET", `/v1/accounts/ngn/${userId}`, { headers: tenant.headers });
    expect(ngn.body).toMatchObject({ currency: "NGN", balance: 0, posted: 0, pending: 500, available: 0 });
    const res = await gql(server, `query ($id: ID!) { accountBalance(userId: $id, currency: USD) { balance posted pending available } }`, { id: userId }, tenant.headers);
    expect(res.body.data.accountBalance).toEqual({ balance: "100", posted: "100", pending: "70", available: "70" });
  });

  it("lists one row per currency with an account or a pending deposit, and none for a new user", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    expect((await rest(server, "GET", `/v1/balances/${userId}`, { headers: tenant.headers })).body).toEqual({ userId, balances: [] });
    await fund(server, tenant.clientId, userId, "EUR", "12.5");
    await fund(server, tenant.clientId, userId, "DAI", "0.000001");
    const res = await rest(server, "GET", `/v1/balances/${userId}`, { headers: tenant.headers });
    expect(res.body.balances).toEqual([
      { currency: "DAI", posted: 0.000001, pending: 0.000001, available: 0.000001, livemode: false },
      { currency: "EUR", posted: 12.5, pending: 12.5, available: 12.5, livemode: false },
    ]);
    expect((await gql(server, BALANCES, { id: userId }, tenant.headers)).body.data.user.balances.map((b: { currency: string }) => b.currency)).toEqual(["DAI", "EUR"]);
  });

  it.each([
    ["another client's user", "stranger", 404],
    ["an unknown user", "unknown", 404],
    ["an id that is not a UUID", "42", 400],
  ])("answers %s (%s) with %i on REST and the same code on GraphQL", async (_what, who, status) => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const stranger = await newTenant(server);
    const id = who === "stranger" ? userId : who === "unknown" ? crypto.randomUUID() : who;
    const res = await rest(server, "GET", `/v1/balances/${id}`, { headers: stranger.headers });
    expect(res.status).toBe(status);
    expect(res.body.balances).toBeUndefined();
    const graph = await gql(server, BALANCES, { id }, stranger.headers);
    expect(graph.body.data?.user ?? null).toBeNull();
    expect(graph.body.errors?.[0].extensions?.code).toBe(status === 404 ? "NOT_FOUND" : "BAD_USER_INPUT");
  });
});
