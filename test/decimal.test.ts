import type { GraphQLScalarType } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Prisma } from "../src/generated/prisma/client.js";
import { schema } from "../src/gateway/schema.js";
import { Exact } from "../src/money/amount.js";
import { createUser, gql, rest } from "./support/http.js";
import { fund } from "./support/ledger.js";
import { newTenant, startServer, type TestServer } from "./support/server.js";

describe("the Decimal scalar prints plain notation", () => {
  const decimal = schema.getType("Decimal") as GraphQLScalarType;

  it.each([
    ["a tiny Prisma Decimal", new Prisma.Decimal("0.00000001"), "0.00000001"],
    ["a tiny negative Prisma Decimal", new Prisma.Decimal("-0.00000001"), "-0.00000001"],
    ["the smallest DAI amount", new Prisma.Decimal("0.000000000000000001"), "0.000000000000000001"],
    ["a large Prisma Decimal", new Prisma.Decimal("1e21"), "1000000000000000000000"],
    ["a large negative decimal.js value", new Exact("-1e21"), "-1000000000000000000000"],
    ["a tiny number", 1e-8, "0.00000001"],
    ["a large number", 1e21, "1000000000000000000000"],
    ["text in exponent notation", "-2.5e-7", "-0.00000025"],
    ["plain text, trailing zeros kept", "1250.50", "1250.50"],
    ["a NUMERIC(38,18) value at full precision", new Prisma.Decimal("12345678901234567890.123456789012345678"), "12345678901234567890.123456789012345678"],
  ])("%s", (_name, value, printed) => {
    expect(decimal.serialize(value)).toBe(printed);
  });
});

describe("a tiny amount end to end", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server?.stop());

  it("a 0.00000001 DAI deposit reads 0.00000001 in GraphQL, and the JSON number 0.00000001 in REST", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const deposit = await rest(server, "POST", "/v1/sandbox/deposits", { headers: tenant.headers, body: { userId, currency: "DAI", amount: "0.00000001" } });
    expect(deposit.status).toBe(201);
    expect((await rest(server, "POST", `/v1/sandbox/deposits/${deposit.body.id}/complete`, { headers: tenant.headers })).status).toBe(200);

    const read = await gql(server, `query ($id: ID!) { user(id: $id) { balances { currency balance } ledger { edges { node { amount balanceAfter } } } deposits { edges { node { amount } } } } }`, { id: userId }, tenant.headers);
    expect(read.body.errors).toBeUndefined();
    expect(read.body.data.user).toEqual({
      balances: [{ currency: "DAI", balance: "0.00000001" }],
      ledger: { edges: [{ node: { amount: "0.00000001", balanceAfter: "0.00000001" } }] },
      deposits: { edges: [{ node: { amount: "0.00000001" } }] },
    });

    // REST money stays a JSON number (the contract), written in plain notation.
    const ledger = await fetch(`${server.url}/v1/transactions/ledger/${userId}`, { headers: tenant.headers });
    const text = await ledger.text();
    expect(text).toMatch(/"amount":0\.00000001\b/);
    expect(JSON.parse(text)[0]).toMatchObject({ amount: 0.00000001, balanceAfter: 0.00000001 });
  });

  /** More digits than a double carries: an 18-decimal DAI amount, and a USDC amount of 18 significant digits. */
  const DAI = "163.808222690160182292";
  const USDC = "123456789012.345678";
  /** The amount's text in a pattern: its point is a point. */
  const digits = (amount: string) => amount.replace(".", "\\.");

  it("REST writes every digit of a money amount in the JSON text, on the balances, ledger, deposits and withdrawals routes", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const deposit = await rest(server, "POST", "/v1/sandbox/deposits", { headers: tenant.headers, body: { userId, currency: "DAI", amount: DAI } });
    expect(deposit.status).toBe(201);
    expect((await rest(server, "POST", `/v1/sandbox/deposits/${deposit.body.id}/complete`, { headers: tenant.headers })).status).toBe(200);
    await fund(server, tenant.clientId, userId, "USDC", USDC);
    const withdrawal = await fetch(`${server.url}/v1/withdrawals/usdc`, {
      method: "POST",
      headers: { ...tenant.headers, "content-type": "application/json" },
      body: JSON.stringify({ userId, amount: USDC, walletAddress: "0x71C7656EC7ab88b098defB751B7401B5f6d8976F", network: "ETHEREUM", chainId: 1 }),
    });
    const created = await withdrawal.text();
    expect(withdrawal.status, created).toBe(200);
    expect(created).toContain(`"amount":${USDC},`);
    const { reference } = JSON.parse(created) as { reference: string };

    const cases: [string, RegExp[]][] = [
      [`/v1/balances/${userId}`, [new RegExp(`"currency":"DAI","posted":${digits(DAI)},"pending":${digits(DAI)},"available":${digits(DAI)},"livemode":false\\}`)]],
      [`/v1/transactions/ledger/${userId}`, [new RegExp(`"currency":"DAI","amount":${digits(DAI)},"balanceBefore":0,"balanceAfter":${digits(DAI)},`), new RegExp(`"currency":"USDC","amount":-${digits(USDC)},`)]],
      [`/v1/transactions/deposits/${userId}`, [new RegExp(`"amount":${digits(DAI)},"status":"COMPLETED"`)]],
      [`/v1/withdrawals/${reference}`, [new RegExp(`"amount":${digits(USDC)},`)]],
      [`/v1/withdrawals/user/${userId}`, [new RegExp(`"amount":${digits(USDC)},`)]],
    ];
    for (const [path, expected] of cases) {
      const res = await fetch(`${server.url}${path}`, { headers: tenant.headers });
      const text = await res.text();
      expect(res.status, `${path} ${text}`).toBe(200);
      for (const pattern of expected) expect(text, path).toMatch(pattern);
    }
  });
});
