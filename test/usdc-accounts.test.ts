import { isAddress } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";
import { createUser, errorCodes, gql, rest, contractKeys } from "./support/http.js";

const ACCOUNT_FIELDS = ["id", "userId", "chain", "chainId", "address", "tokenAddress", "balance", "createdAt", "livemode"];
const USDC_ON_BASE = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

const createAccount = (tenant: Tenant, userId: string, chainType: unknown) =>
  rest(server, "POST", `/v1/accounts/usdc/${userId}`, { headers: tenant.headers, body: { chainType } });

describe("POST /v1/accounts/usdc/{userId}", () => {
  it("creates the account at the user's wallet address (creating the wallet) with the real USDC contract", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const res = await createAccount(tenant, userId, "BASE");
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(ACCOUNT_FIELDS);
    expect(res.body).toMatchObject({ userId, chain: "BASE", chainId: 8453, tokenAddress: USDC_ON_BASE, balance: 0 });
    expect(isAddress(res.body.address, { strict: true })).toBe(true);
    const wallet = await rest(server, "GET", `/v1/wallet/${userId}`, { headers: tenant.headers });
    expect(wallet.status).toBe(200);
    expect(res.body.address).toBe(wallet.body.address);
  });

  it("is idempotent per chain, case-insensitively, also under concurrent requests", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const results = await Promise.all(["POLYGON", "polygon", "Polygon", "POLYGON"].map((chain) => createAccount(tenant, userId, chain)));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect(await server.app.db.prisma.usdcAccount.count({ where: { userId } })).toBe(1);
    expect(await server.app.db.prisma.wallet.count({ where: { userId } })).toBe(1);
  });

  it("shows the user's USDC ledger balance", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    // The ledger writes these rows; here one is set up directly.
    await server.app.db.prisma.ledgerAccount.create({
      data: { clientId: tenant.clientId, userId, code: "USER", currency: "USDC", balance: "125.5" },
    });
    const res = await createAccount(tenant, userId, "ETHEREUM");
    expect(res.body.balance).toBe(125.5);
    const graph = await gql(server, `query ($id: ID!) { user(id: $id) { usdcAccounts { balance } } }`, { id: userId }, tenant.headers);
    expect(graph.body.data.user.usdcAccounts).toEqual([{ balance: "125.5" }]);
  });

  it("answers 400 naming chainType when it is missing or unsupported", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    for (const chainType of [undefined, "SOLANA", 1]) {
      const res = await createAccount(tenant, userId, chainType);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/chainType/);
    }
    expect(await server.app.db.prisma.wallet.count({ where: { userId } })).toBe(0);
  });

  it("answers 400 for a malformed user id and 404 for an unknown or another client's user", async () => {
    const [tenant, other] = await Promise.all([newTenant(server), newTenant(server)]);
    const bad = await createAccount(tenant, "x", "BASE");
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/userId/);
    const foreignUser = await createUser(server, other);
    for (const userId of [crypto.randomUUID(), foreignUser]) {
      const res = await createAccount(tenant, userId, "BASE");
      expect(res.status).toBe(404);
      expect(contractKeys(res.body)).toEqual(["error"]);
    }
    expect(await server.app.db.prisma.usdcAccount.count({ where: { userId: foreignUser } })).toBe(0);
  });
});

describe("GET /v1/accounts/usdc/{userId}", () => {
  it("lists the user's accounts (empty before any)", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const empty = await rest(server, "GET", `/v1/accounts/usdc/${userId}`, { headers: tenant.headers });
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual([]);
    await createAccount(tenant, userId, "ETHEREUM");
    await createAccount(tenant, userId, "ARBITRUM");
    const res = await rest(server, "GET", `/v1/accounts/usdc/${userId}`, { headers: tenant.headers });
    expect(res.body.map((a: { chain: string }) => a.chain)).toEqual(["ETHEREUM", "ARBITRUM"]);
    expect(Object.keys(res.body[0])).toEqual(ACCOUNT_FIELDS);
  });

  it("answers 404 for an unknown or another client's user, 400 for a malformed id", async () => {
    const [tenant, other] = await Promise.all([newTenant(server), newTenant(server)]);
    const foreignUser = await createUser(server, other);
    await rest(server, "POST", `/v1/accounts/usdc/${foreignUser}`, { headers: other.headers, body: { chainType: "BASE" } });
    for (const userId of [crypto.randomUUID(), foreignUser]) {
      const res = await rest(server, "GET", `/v1/accounts/usdc/${userId}`, { headers: tenant.headers });
      expect(res.status).toBe(404);
    }
    expect((await rest(server, "GET", "/v1/accounts/usdc/abc", { headers: tenant.headers })).status).toBe(400);
  });
});

describe("GET /v1/accounts/usdc/{userId}/{chain}", () => {
  it("returns the account on that chain, case-insensitively", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const created = await createAccount(tenant, userId, "OPTIMISM");
    const res = await rest(server, "GET", `/v1/accounts/usdc/${userId}/optimism`, { headers: tenant.headers });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(created.body);
  });

  it("answers 404 when there is no account on that chain or the user is another client's", async () => {
    const [tenant, other] = await Promise.all([newTenant(server), newTenant(server)]);
    const userId = await createUser(server, tenant);
    await createAccount(tenant, userId, "ETHEREUM");
    const missing = await rest(server, "GET", `/v1/accounts/usdc/${userId}/BASE`, { headers: tenant.headers });
    expect(missing.status).toBe(404);
    expect(contractKeys(missing.body)).toEqual(["error"]);
    const foreign = await rest(server, "GET", `/v1/accounts/usdc/${userId}/ETHEREUM`, { headers: other.headers });
    expect(foreign.status).toBe(404);
  });

  it("answers 400 for an unknown chain", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const res = await rest(server, "GET", `/v1/accounts/usdc/${userId}/DOGECHAIN`, { headers: tenant.headers });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/chain/);
  });
});

describe("GraphQL USDC accounts", () => {
  it("createUsdcAccount and User.usdcAccounts agree; usdcAccount is NOT_FOUND on a chain without account", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const created = await gql(
      server,
      `mutation ($id: ID!) { createUsdcAccount(userId: $id, chainType: BASE) { id chain chainId balance } }`,
      { id: userId },
      tenant.headers,
    );
    expect(created.body.data.createUsdcAccount).toMatchObject({ chain: "BASE", chainId: 8453, balance: "0" });
    const listed = await gql(server, `query ($id: ID!) { user(id: $id) { usdcAccounts { id } } }`, { id: userId }, tenant.headers);
    expect(listed.body.data.user.usdcAccounts).toEqual([{ id: created.body.data.createUsdcAccount.id }]);
    const missing = await gql(server, `query ($id: ID!) { usdcAccount(userId: $id, chain: POLYGON) { id } }`, { id: userId }, tenant.headers);
    expect(errorCodes(missing)).toEqual(["NOT_FOUND"]);
  });
});
