import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { validate as isAbaValid } from "abavalidator";
import { clabe } from "clabe-validator";
import { isValidBIC, isValidIBAN } from "ibantools";
import { isAddress } from "viem";
import { startServer, newTenant, type Tenant, type TestServer } from "./support/server.js";
import { createUser, errorCodes, gql, rest, contractKeys, contractBody } from "./support/http.js";
import type { BankingProvider } from "../src/providers/banking.js";

const COMMON_KEYS = ["id", "userId", "currency", "createdAt", "destinationAsset", "destinationNetwork", "destinationAddress"];
const NGN_KEYS = [...COMMON_KEYS, "accountName", "accountNumber", "bankName", "bankCode", "metadata", "livemode"];
const FIAT_KEYS = [...COMMON_KEYS, "bankName", "accountNumber", "routingNumber", "accountHolderName", "accountHolderType", "bankAddress", "metadata", "livemode"];
const CHECKSUMMED = "0x52908400098527886E0F7030069857D2E4169EE7";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

const createAccount = (tenant: Tenant, currency: string, body: Record<string, unknown>, on = server) =>
  rest(on, "POST", `/v1/virtual-account/${currency}`, { headers: tenant.headers, body });

async function accountsOf(tenant: Tenant, userId: string) {
  const res = await gql(server, `query ($id: ID!) { user(id: $id) { virtualAccounts { id currency } } }`, { id: userId }, tenant.headers);
  return res.body.data?.user?.virtualAccounts as { id: string; currency: string }[];
}

describe("POST /v1/virtual-account/{currency}: shapes per currency", () => {
  it("issues an NGN account in the NGN shape with a 10-digit account number and the user's name", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant, { firstName: "Chinua", lastName: "Achebe" });
    const res = await createAccount(tenant, "ngn", { userId });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(NGN_KEYS);
    expect(res.body).toMatchObject({ userId: userId, currency: "NGN", accountName: "Chinua Achebe" });
    expect(res.body.accountNumber).toMatch(/^\d{10}$/);
    expect(res.body.bankCode).toMatch(/^\d{3}$/);
  });

  it("issues a USD account with a valid ABA routing number", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant, { firstName: "Grace", lastName: "Hopper" });
    const res = await createAccount(tenant, "usd", { userId });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(FIAT_KEYS);
    expect(res.body).toMatchObject({ currency: "USD", accountHolderName: "Grace Hopper", accountHolderType: "individual" });
    expect(isAbaValid(res.body.routingNumber)).toBe(true);
  });

  it("issues a EUR account whose number is a valid IBAN and routing number a valid BIC", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const res = await createAccount(tenant, "EUR", { userId });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(FIAT_KEYS);
    expect(isValidIBAN(res.body.accountNumber)).toBe(true);
    expect(isValidBIC(res.body.routingNumber)).toBe(true);
  });

  it("issues an MXN account whose number is a valid CLABE", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const res = await createAccount(tenant, "mxn", { userId });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(FIAT_KEYS);
    expect(clabe.validate(res.body.accountNumber).ok).toBe(true);
  });

  it("issues a BRL account in the bank shape", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const res = await createAccount(tenant, "Brl", { userId });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(FIAT_KEYS);
    expect(res.body.currency).toBe("BRL");
    expect(res.body.accountNumber).toMatch(/^\d{8}-\d$/);
  });
});

describe("POST /v1/virtual-account/{currency}: destination", () => {
  it("defaults to USDC on ETHEREUM sent to the user's own wallet, created once", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const ngn = await createAccount(tenant, "ngn", { userId });
    const usd = await createAccount(tenant, "usd", { userId });
    expect(ngn.body).toMatchObject({ destinationAsset: "USDC", destinationNetwork: "ETHEREUM" });
    expect(isAddress(ngn.body.destinationAddress, { strict: true })).toBe(true);
    const wallet = await rest(server, "GET", `/v1/wallet/${userId}`, { headers: tenant.headers });
    expect(wallet.status).toBe(200);
    expect(ngn.body.destinationAddress).toBe(wallet.body.address);
    expect(usd.body.destinationAddress).toBe(wallet.body.address);
  });

  it("echoes an explicit asset, network and address", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const res = await createAccount(tenant, "eur", { userId: userId, destinationAsset: "DAI", destinationNetwork: "BASE", address: CHECKSUMMED });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ destinationAsset: "DAI", destinationNetwork: "BASE", destinationAddress: CHECKSUMMED });
  });

  it.each([
    ["destinationAsset", { destinationAsset: "BTC" }],
    ["destinationNetwork", { destinationNetwork: "SOLANA" }],
    ["address", { address: "0x1234" }],
    ["address", { address: CHECKSUMMED.replace("E", "e") }],
    ["address", { address: 42 }],
  ])("refuses a bad %s with 400 naming it", async (field, body) => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const res = await createAccount(tenant, "usd", { userId: userId, ...body });
    expect(res.status).toBe(400);
    expect(contractKeys(res.body)).toEqual(["error"]);
    expect(res.body.error).toContain(field);
  });
});

describe("POST /v1/virtual-account/{currency}: errors", () => {
  it("refuses an unsupported currency with 400 naming the supported ones", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const res = await createAccount(tenant, "gbp", { userId });
    expect(res.status).toBe(400);
    expect(contractBody(res.body)).toEqual({ error: "currency must be one of NGN, USD, EUR, MXN, BRL" });
  });

  it("refuses a missing or non-UUID userId with 400", async () => {
    const tenant = await newTenant(server);
    const missing = await createAccount(tenant, "usd", {});
    const malformed = await createAccount(tenant, "usd", { userId: "not-a-uuid" });
    expect([missing.status, malformed.status]).toEqual([400, 400]);
    expect(missing.body.error).toContain("userId");
    expect(malformed.body.error).toContain("userId");
  });

  it("answers 404 for an unknown user and for another client's user, creating nothing", async () => {
    const tenant = await newTenant(server);
    const other = await newTenant(server);
    const theirs = await createUser(server, other);
    const unknown = await createAccount(tenant, "usd", { userId: crypto.randomUUID() });
    const foreign = await createAccount(tenant, "usd", { userId: theirs });
    expect([unknown.status, foreign.status]).toEqual([404, 404]);
    expect(contractBody(foreign.body)).toEqual(contractBody(unknown.body));
    expect(await accountsOf(other, theirs)).toEqual([]);
  });

  it("answers 500 with {error, details} when the provider fails, without leaking its message or keeping a row", async () => {
    const failing: BankingProvider = {
      name: "failing-fiat",
      currencies: ["USD", "EUR", "MXN", "BRL"],
      createVirtualAccount: async () => {
        throw new Error("connect ECONNREFUSED 10.1.2.3:443 token=s3cr3t");
      },
    };
    const broken = await startServer({ providers: { fiatBank: failing } });
    try {
      const tenant = await newTenant(broken);
      const userId = await createUser(broken, tenant);
      const res = await createAccount(tenant, "usd", { userId: userId }, broken);
      expect(res.status).toBe(500);
      expect(contractKeys(res.body).sort()).toEqual(["details", "error"]);
      expect(JSON.stringify(res.body)).not.toMatch(/ECONNREFUSED|s3cr3t/);
      const ngn = await createAccount(tenant, "ngn", { userId: userId }, broken);
      expect(ngn.status).toBe(200);
      const listed = await gql(broken, `query ($id: ID!) { user(id: $id) { virtualAccounts { currency } } }`, { id: userId }, tenant.headers);
      expect(listed.body.data?.user?.virtualAccounts).toEqual([{ currency: "NGN" }]);
    } finally {
      await broken.stop();
    }
  });
});

describe("POST /v1/virtual-account/{currency}: one account per user and currency", () => {
  it("returns the existing account on a repeat, whatever the new body says", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const first = await createAccount(tenant, "usd", { userId });
    const again = await createAccount(tenant, "USD", { userId: userId, destinationAsset: "USDT", address: CHECKSUMMED });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
  });

  it("keeps one account under 10 concurrent creations", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const results = await Promise.all(Array.from({ length: 10 }, () => createAccount(tenant, "mxn", { userId })));
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect(await accountsOf(tenant, userId)).toEqual([{ id: results[0].body.id, currency: "MXN" }]);
  });
});

describe("GraphQL virtual accounts", () => {
  it("lists a user's accounts under User.virtualAccounts with both shapes' fields", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const ngn = await createAccount(tenant, "ngn", { userId });
    const eur = await createAccount(tenant, "eur", { userId });
    const res = await gql(
      server,
      `query ($id: ID!) { user(id: $id) { virtualAccounts { id currency accountNumber bankCode routingNumber } } }`,
      { id: userId },
      tenant.headers,
    );
    expect(res.body.data?.user?.virtualAccounts).toEqual([
      { id: ngn.body.id, currency: "NGN", accountNumber: ngn.body.accountNumber, bankCode: ngn.body.bankCode, routingNumber: null },
      { id: eur.body.id, currency: "EUR", accountNumber: eur.body.accountNumber, bankCode: null, routingNumber: eur.body.routingNumber },
    ]);
  });

  it("creates through createVirtualAccount and reports bad input as BAD_USER_INPUT", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const mutation = `mutation ($input: CreateVirtualAccountInput!) { createVirtualAccount(input: $input) { currency destinationNetwork } }`;
    const ok = await gql(server, mutation, { input: { currency: "BRL", userId: userId, destinationNetwork: "POLYGON" } }, tenant.headers);
    expect(ok.body.data?.createVirtualAccount).toEqual({ currency: "BRL", destinationNetwork: "POLYGON" });
    const bad = await gql(server, mutation, { input: { currency: "XYZ", userId: userId } }, tenant.headers);
    expect(errorCodes(bad)).toEqual(["BAD_USER_INPUT"]);
  });
});
