import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, newTenant, type Tenant, type TestServer } from "./support/server.js";
import { createUser, errorCodes, gql, rest, contractKeys } from "./support/http.js";
import { expectLedgerInvariants, fund } from "./support/ledger.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

const TRANSACTION_KEYS = ["id", "amount", "balance", "created_ts", "description", "status", "type", "livemode"];

async function cardholder(usd: string) {
  const tenant = await newTenant(server);
  const userId = await createUser(server, tenant);
  expect((await rest(server, "GET", `/v1/virtual-cards/${userId}`, { headers: tenant.headers })).status).toBe(200);
  await fund(server, tenant.clientId, userId, "USD", usd);
  return { tenant, userId };
}

const spend = (tenant: Tenant, body: Record<string, unknown>) => rest(server, "POST", "/v1/sandbox/card-transactions", { headers: tenant.headers, body });

describe("POST /v1/sandbox/card-transactions", () => {
  it("settles a DEBIT against the USD balance and lists it with the balance after it", async () => {
    const { tenant, userId } = await cardholder("100");
    const first = await spend(tenant, { userId, amount: 25.5, description: "Coffee Roasters" });
    expect(first.status).toBe(200);
    expect(Object.keys(first.body)).toEqual(TRANSACTION_KEYS);
    expect(first.body).toMatchObject({ amount: 25.5, balance: 74.5, description: "Coffee Roasters", status: "SETTLED", type: "DEBIT" });
    const second = await spend(tenant, { userId, amount: "4.50", description: "Bakery" });
    expect(second.body.balance).toBe(70);

    const list = await rest(server, "GET", `/v1/virtual-cards/transactions/${userId}/1`, { headers: tenant.headers });
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ page: 1, pages: 1, total: 2 });
    expect(list.body.transactions.map((t: { id: string; balance: number }) => [t.id, t.balance]).sort()).toEqual(
      [[first.body.id, 74.5], [second.body.id, 70]].sort(),
    );

    const ledger = await rest(server, "GET", `/v1/transactions/ledger/${userId}`, { headers: tenant.headers });
    expect(ledger.body.filter((e: { type: string }) => e.type === "CARD_DEBIT")).toEqual(
      expect.arrayContaining([expect.objectContaining({ currency: "USD", amount: -25.5, balanceBefore: 100, balanceAfter: 74.5, referenceId: first.body.id })]),
    );
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it("refuses a debit above the USD balance with 400 INSUFFICIENT_FUNDS and writes nothing", async () => {
    const { tenant, userId } = await cardholder("10");
    await fund(server, tenant.clientId, userId, "EUR", "500");
    const res = await spend(tenant, { userId, amount: 10.01, description: "Too much" });
    expect(res.status).toBe(400);
    expect(contractKeys(res.body)).toEqual(["error", "details"]);
    expect(res.body.error).toMatch(/insufficient funds/i);
    const list = await rest(server, "GET", `/v1/virtual-cards/transactions/${userId}/1`, { headers: tenant.headers });
    expect(list.body.total).toBe(0);
    expect((await server.app.services.ledger.balance(tenant.clientId, userId, "USD")).toFixed()).toBe("10");
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it("answers 404 when the user has no card, is unknown or is another client's", async () => {
    const tenant = await newTenant(server);
    const cardless = await createUser(server, tenant);
    await fund(server, tenant.clientId, cardless, "USD", "10");
    const noCard = await spend(tenant, { userId: cardless, amount: 1, description: "x" });
    expect(noCard.status).toBe(404);
    expect(noCard.body.error).toMatch(/card/i);
    const { userId } = await cardholder("10");
    expect((await spend(tenant, { userId, amount: 1, description: "x" })).status).toBe(404);
    expect((await spend(tenant, { userId: crypto.randomUUID(), amount: 1, description: "x" })).status).toBe(404);
  });

  it.each([
    [{ amount: 1.234, description: "x" }, /more than 2 decimals/],
    [{ amount: 0, description: "x" }, /greater than zero/],
    [{ amount: -1, description: "x" }, /positive/],
    [{ amount: "abc", description: "x" }, /amount/],
    [{ amount: 1 }, /description/],
    [{ amount: 1, description: " " }, /description/],
    [{ amount: 1, description: "x", userId: "nope" }, /userId/],
  ])("refuses %j with 400", async (body, message) => {
    const { tenant, userId } = await cardholder("10");
    const res = await spend(tenant, { userId, ...body });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(message);
  });
});

describe("GraphQL simulateCardTransaction", () => {
  it("settles a debit and reports INSUFFICIENT_FUNDS as a typed error", async () => {
    const { tenant, userId } = await cardholder("5");
    const mutation = `mutation ($input: SimulateCardTransactionInput!) { simulateCardTransaction(input: $input) { amount balance status type } }`;
    const ok = await gql(server, mutation, { input: { userId, amount: "2", description: "Books" } }, tenant.headers);
    expect(ok.body.data.simulateCardTransaction).toEqual({ amount: "2", balance: "3", status: "SETTLED", type: "DEBIT" });
    const short = await gql(server, mutation, { input: { userId, amount: "3.01", description: "Books" } }, tenant.headers);
    expect(errorCodes(short)).toEqual(["INSUFFICIENT_FUNDS"]);
    await expectLedgerInvariants(server, tenant.clientId);
  });
});

describe("with SANDBOX off", () => {
  it("has no sandbox card path, and the mutation answers a live key TEST_MODE_ONLY", async () => {
    const production = await startServer({ env: { SANDBOX: "false" } });
    try {
      const tenant = await newTenant(production, "live");
      const res = await rest(production, "POST", "/v1/sandbox/card-transactions", { headers: tenant.headers, body: {} });
      expect(res.status).toBe(404);
      const mutation = `mutation { simulateCardTransaction(input: { userId: "${crypto.randomUUID()}", amount: "1", description: "x" }) { id } }`;
      expect(errorCodes(await gql(production, mutation, {}, tenant.headers))).toEqual(["TEST_MODE_ONLY"]);
    } finally {
      await production.stop();
    }
  });
});
