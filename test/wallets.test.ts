import { isAddress } from "viem";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { SandboxCustodian } from "../src/providers/custodian.js";
import { newTenant, startServer, type TestServer } from "./support/server.js";
import { createUser, errorCodes, gql, rest, contractKeys } from "./support/http.js";

const WALLET_FIELDS = ["id", "userId", "clientId", "walletId", "addressId", "address", "blockchain", "createdAt", "updatedAt", "livemode"];

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

describe("POST /v1/wallet", () => {
  it("creates a custodial wallet with exactly the contract's fields and a valid EIP-55 address", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const res = await rest(server, "POST", "/v1/wallet", { headers: tenant.headers, body: { userId } });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(WALLET_FIELDS);
    expect(res.body).toMatchObject({ userId, clientId: tenant.clientId, blockchain: "ETHEREUM" });
    expect(isAddress(res.body.address, { strict: true })).toBe(true);
    expect(res.body.address).not.toBe(res.body.address.toLowerCase());
  });

  it("returns the existing wallet on a repeat, and one wallet under concurrent requests", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const custodianCalls = vi.spyOn(SandboxCustodian.prototype, "createWallet");
    const results = await Promise.all(
      Array.from({ length: 10 }, () => rest(server, "POST", "/v1/wallet", { headers: tenant.headers, body: { userId } })),
    );
    const again = await rest(server, "POST", "/v1/wallet", { headers: tenant.headers, body: { userId } });
    expect(new Set([...results, again].map((r) => r.status))).toEqual(new Set([200]));
    expect(new Set([...results, again].map((r) => r.body.id)).size).toBe(1);
    expect(await server.app.db.prisma.wallet.count({ where: { userId } })).toBe(1);
    // Only one request reached the custodian: no orphaned custodial address.
    expect(custodianCalls).toHaveBeenCalledTimes(1);
    custodianCalls.mockRestore();
  });

  it("gives different users different addresses", async () => {
    const tenant = await newTenant(server);
    const [a, b] = await Promise.all([createUser(server, tenant), createUser(server, tenant)]);
    const [wa, wb] = await Promise.all([a, b].map((userId) => rest(server, "POST", "/v1/wallet", { headers: tenant.headers, body: { userId } })));
    expect(wa.body.address).not.toBe(wb.body.address);
  });

  it("answers 400 naming userId for a malformed or missing user id", async () => {
    const tenant = await newTenant(server);
    for (const body of [{ userId: "not-a-uuid" }, {}]) {
      const res = await rest(server, "POST", "/v1/wallet", { headers: tenant.headers, body });
      expect(res.status).toBe(400);
      expect(contractKeys(res.body)).toEqual(["error"]);
      expect(res.body.error).toMatch(/userId/);
    }
  });

  it("answers 404 for an unknown user and for another client's user", async () => {
    const [tenant, other] = await Promise.all([newTenant(server), newTenant(server)]);
    const foreignUser = await createUser(server, other);
    for (const userId of [crypto.randomUUID(), foreignUser]) {
      const res = await rest(server, "POST", "/v1/wallet", { headers: tenant.headers, body: { userId } });
      expect(res.status).toBe(404);
      expect(contractKeys(res.body)).toEqual(["error"]);
    }
    expect(await server.app.db.prisma.wallet.count({ where: { userId: foreignUser } })).toBe(0);
  });

  it("answers 401 without credentials", async () => {
    const res = await rest(server, "POST", "/v1/wallet", { body: { userId: crypto.randomUUID() } });
    expect(res.status).toBe(401);
  });
});

describe("POST /v1/wallet when the custodian fails", () => {
  let failing: TestServer;
  beforeAll(async () => {
    failing = await startServer({
      providers: {
        custodian: {
          createWallet: async () => {
            throw new Error("custodian down: internal detail");
          },
        },
      },
    });
  });
  afterAll(() => failing?.stop());

  it("answers 500 {error} without internal details and stores no wallet", async () => {
    const tenant = await newTenant(failing);
    const userId = await createUser(failing, tenant);
    const res = await rest(failing, "POST", "/v1/wallet", { headers: tenant.headers, body: { userId } });
    expect(res.status).toBe(500);
    expect(contractKeys(res.body)).toEqual(["error"]);
    expect(res.body.error).not.toMatch(/internal detail/);
    expect(await failing.app.db.prisma.wallet.count({ where: { userId } })).toBe(0);
  });

  it("is a PROVIDER_ERROR on GraphQL", async () => {
    const tenant = await newTenant(failing);
    const userId = await createUser(failing, tenant);
    const res = await gql(failing, `mutation ($id: ID!) { createWallet(userId: $id) { id } }`, { id: userId }, tenant.headers);
    expect(errorCodes(res)).toEqual(["PROVIDER_ERROR"]);
  });
});

describe("GET /v1/wallet/{userId}", () => {
  it("returns the user's wallet", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const created = await rest(server, "POST", "/v1/wallet", { headers: tenant.headers, body: { userId } });
    const res = await rest(server, "GET", `/v1/wallet/${userId}`, { headers: tenant.headers });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(created.body);
  });

  it("answers 404 when the user has no wallet, is unknown, or belongs to another client", async () => {
    const [tenant, other] = await Promise.all([newTenant(server), newTenant(server)]);
    const [withoutWallet, foreignUser] = await Promise.all([createUser(server, tenant), createUser(server, other)]);
    await rest(server, "POST", "/v1/wallet", { headers: other.headers, body: { userId: foreignUser } });
    for (const userId of [withoutWallet, crypto.randomUUID(), foreignUser]) {
      const res = await rest(server, "GET", `/v1/wallet/${userId}`, { headers: tenant.headers });
      expect(res.status).toBe(404);
      expect(contractKeys(res.body)).toEqual(["error"]);
    }
  });

  it("answers 400 for a malformed user id", async () => {
    const tenant = await newTenant(server);
    const res = await rest(server, "GET", "/v1/wallet/123", { headers: tenant.headers });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/userId/);
  });
});

describe("GraphQL wallets", () => {
  it("exposes User.wallet: null before creation, the wallet after; no key material anywhere", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const query = `query ($id: ID!) { user(id: $id) { wallet { id address walletId } } }`;
    const before = await gql(server, query, { id: userId }, tenant.headers);
    expect(before.body.data.user.wallet).toBeNull();
    const created = await gql(server, `mutation ($id: ID!) { createWallet(userId: $id) { id address } }`, { id: userId }, tenant.headers);
    const after = await gql(server, query, { id: userId }, tenant.headers);
    expect(after.body.data.user.wallet.id).toBe(created.body.data.createWallet.id);
    const row = await server.app.db.prisma.wallet.findUniqueOrThrow({ where: { userId } });
    expect(Object.keys(row).some((key) => /key|secret|seed|mnemonic/i.test(key))).toBe(false);
  });

  it("wallet(userId) is NOT_FOUND for another client's user", async () => {
    const [tenant, other] = await Promise.all([newTenant(server), newTenant(server)]);
    const foreignUser = await createUser(server, other);
    await rest(server, "POST", "/v1/wallet", { headers: other.headers, body: { userId: foreignUser } });
    const res = await gql(server, `query ($id: ID!) { wallet(userId: $id) { id } }`, { id: foreignUser }, tenant.headers);
    expect(errorCodes(res)).toEqual(["NOT_FOUND"]);
  });
});
