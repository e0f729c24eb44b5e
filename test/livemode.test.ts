import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Mode } from "../src/modes.js";
import { createUser, errorCodes, gql, rest, type HttpResult } from "./support/http.js";
import { fund } from "./support/ledger.js";
import { craftSessionToken } from "./support/pipeline.js";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";
import { HOLDER, USDC_ADDRESS } from "./support/withdrawals.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

/** A tenant of `mode` with a funded user, and a deposit, a withdrawal and a virtual account of that user (written as rows: live mode has no sandbox to make them). */
type Fixture = { tenant: Tenant; userId: string };

async function fixture(mode: Mode): Promise<Fixture> {
  const tenant = await newTenant(server, mode);
  const { clientId } = tenant;
  const userId = await createUser(server, tenant, HOLDER);
  await fund(server, clientId, userId, "USD", "100");
  const { prisma } = server.app.db;
  await prisma.deposit.create({ data: { clientId, userId, provider: "livemode-test", eventId: randomUUID(), amount: "10", currency: "NGN", status: "COMPLETED" } });
  await prisma.withdrawal.create({
    data: { reference: `wd_${randomUUID()}`, clientId, userId, type: "BANK", currency: "USD", amount: "5", fee: "0", status: "PENDING", destination: JSON.stringify({ account: "123456789" }) },
  });
  await prisma.virtualAccount.create({
    data: {
      clientId, userId, currency: "USD", provider: "livemode-test", destinationAsset: "USDC", destinationNetwork: "BASE", destinationAddress: USDC_ADDRESS,
      bankName: "Bank", accountNumber: randomUUID(), routingNumber: "011000015", accountHolderName: "Ada Lovelace", accountHolderType: "individual", bankAddress: "1 Bank Street",
    },
  });
  return { tenant, userId };
}

type Objects = (body: any) => unknown[];
const one: Objects = (body) => [body];
const each: Objects = (body) => body;
const inData: Objects = (body) => body.data;

/** REST routes that answer resources, and where the resources are in each answer. In order: the later ones read what the earlier made. */
const ROUTES: [string, (f: Fixture) => [string, string, unknown?], Objects][] = [
  ["create a user", () => ["POST", "/v1/user", { email: `u-${randomUUID()}@example.com`, firstName: "Ada", lastName: "Lovelace", phoneNumber: "+14155552671", dob: "1990-05-17" }], one],
  ["list users", () => ["GET", "/v1/user"], each],
  ["get a user", (f) => ["GET", `/v1/user/${f.userId}`], one],
  ["create a wallet", (f) => ["POST", "/v1/wallet", { userId: f.userId }], one],
  ["get a wallet", (f) => ["GET", `/v1/wallet/${f.userId}`], one],
  ["issue a virtual card", (f) => ["POST", "/v1/virtual-cards", { userId: f.userId }], one],
  ["create an API key", () => ["POST", "/v1/api-keys", { name: "livemode" }], one],
  ["list API keys", () => ["GET", "/v1/api-keys"], each],
  ["create a webhook endpoint", () => ["POST", "/v1/webhook-endpoints", { url: "http://127.0.0.1:9/hooks" }], one],
  ["list webhook endpoints", () => ["GET", "/v1/webhook-endpoints"], inData],
  ["read the audit log", () => ["GET", "/v1/audit-log"], inData],
  ["list ledger entries", (f) => ["GET", `/v1/transactions/ledger/${f.userId}`], each],
  ["list transactions", () => ["GET", "/v1/transactions"], (body) => body.transactions],
  ["read a user's balances", (f) => ["GET", `/v1/balances/${f.userId}`], (body) => body.balances],
  ["read an account balance, with its virtual account", (f) => ["GET", `/v1/accounts/usd/${f.userId}`], (body) => [body, body.virtualAccount]],
  ["quote a conversion", () => ["GET", "/v1/conversion/quote?from=USD&to=EUR&amount=10"], one],
  ["convert", (f) => ["POST", "/v1/conversion", { userId: f.userId, from: "USD", to: "EUR", amount: 10 }], one],
  ["list deposits", (f) => ["GET", `/v1/transactions/deposits/${f.userId}`], each],
  ["list withdrawals", (f) => ["GET", `/v1/withdrawals/user/${f.userId}`], each],
];

const MODES: [Mode, boolean][] = [
  ["test", false],
  ["live", true],
];

describe.each(MODES)("with a %s key every resource says livemode %s", (mode, livemode) => {
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture(mode);
  });

  it.each(ROUTES)("REST: %s", async (_name, request, objects) => {
    const [method, path, body] = request(f);
    const res: HttpResult = await rest(server, method, path, { headers: f.tenant.headers, body });
    expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
    const found = objects(res.body);
    expect(found.length, `${method} ${path} answered no resource`).toBeGreaterThan(0);
    for (const object of found) expect(object, `${method} ${path}`).toMatchObject({ livemode });
  });

  it("GraphQL: users and what hangs off them, keys, endpoints and the audit log say livemode", async () => {
    const res = await gql(
      server,
      `query ($id: ID!) {
        user(id: $id) { livemode balances { livemode } ledgerPage { livemode } depositsPage { livemode } withdrawalsPage { livemode } virtualAccounts { livemode } }
        users { livemode }
        apiKeys { livemode mode }
        webhookEndpoints { livemode }
        auditLog { edges { node { livemode } } }
        clientBalances { livemode }
        conversionQuote(from: USD, to: EUR, amount: "1") { livemode }
      }`,
      { id: f.userId },
      f.tenant.headers,
    );
    expect(res.body.errors).toBeUndefined();
    const { user, users, apiKeys, webhookEndpoints, auditLog, conversionQuote } = res.body.data;
    const objects = [user, ...user.balances, ...user.ledgerPage, ...user.depositsPage, ...user.withdrawalsPage, ...user.virtualAccounts, ...users, ...apiKeys, ...auditLog.edges.map((e: { node: unknown }) => e.node), conversionQuote];
    expect(objects.length).toBeGreaterThan(8);
    for (const object of [...objects, ...webhookEndpoints]) expect(object).toMatchObject({ livemode });
    expect(apiKeys.map((key: { mode: string }) => key.mode)).toEqual(apiKeys.map(() => mode));
  });
});

describe("createApiKey's mode", () => {
  /** A business's session (an OTP JWT) in `mode`: its test tenant signs in, x-mode names the mode. */
  async function session(tenant: Tenant, mode: Mode) {
    return { "x-client-auth": await craftSessionToken(server, tenant.clientId), "x-mode": mode };
  }
  const createKey = (headers: Record<string, string>, body: unknown = {}) => rest(server, "POST", "/v1/api-keys", { headers, body });
  const keyOf = (res: HttpResult) => ({ mode: res.body.mode, livemode: res.body.livemode, prefix: res.body.prefix.replace(/[0-9a-f]{12}$/, "…") });

  it.each([
    ["a test key, no mode", "test", undefined, "test"],
    ["a test key, mode test", "test", "test", "test"],
    ["a live key, no mode", "live", undefined, "live"],
    ["a live key, mode live", "live", "live", "live"],
  ] as const)("%s: a key of the caller's mode", async (_name, callerMode, mode, expected) => {
    const tenant = await newTenant(server, callerMode);
    const res = await createKey(tenant.headers, { mode });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(keyOf(res)).toEqual({ mode: expected, livemode: expected === "live", prefix: `fpk_${expected}_…` });
  });

  it.each([
    ["test", "live"],
    ["live", "test"],
  ] as const)("a %s API key asking for a %s key is FORBIDDEN, over REST and GraphQL, and nothing is created", async (callerMode, mode) => {
    const tenant = await newTenant(server, callerMode);
    const business = await server.app.db.prisma.client.findUniqueOrThrow({ where: { id: tenant.clientId } });
    const keysBefore = await server.app.db.prisma.apiKey.count({ where: { client: { accountId: business.accountId } } });
    const res = await createKey(tenant.headers, { mode });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ error: expect.stringContaining(`A ${callerMode} API key can only create ${callerMode} keys`), code: "FORBIDDEN", param: "mode" });
    const viaGraphQL = await gql(server, `mutation ($mode: ApiKeyMode) { createApiKey(input: { mode: $mode }) { id } }`, { mode }, tenant.headers);
    expect(errorCodes(viaGraphQL)).toEqual(["FORBIDDEN"]);
    expect(await server.app.db.prisma.apiKey.count({ where: { client: { accountId: business.accountId } } })).toBe(keysBefore);
  });

  it.each([
    ["test", "live"],
    ["test", "test"],
    ["live", "test"],
    ["live", "live"],
  ] as const)("a session in %s mode creates a %s key, in the business's tenant of that mode", async (sessionMode, mode) => {
    const tenant = await newTenant(server, "test");
    const res = await createKey(await session(tenant, sessionMode), { mode });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(keyOf(res)).toEqual({ mode, livemode: mode === "live", prefix: `fpk_${mode}_…` });
    const business = await server.app.db.prisma.client.findUniqueOrThrow({ where: { id: tenant.clientId } });
    const owner = await server.app.db.prisma.apiKey.findUniqueOrThrow({ where: { id: res.body.id }, include: { client: true } });
    expect([owner.client.accountId, owner.client.mode]).toEqual([business.accountId, mode]);
    // The new key acts in its mode: its own key list is its tenant's, where it is listed as of that mode.
    const listed = await rest(server, "GET", "/v1/api-keys", { headers: { "x-api-key": res.body.key } });
    expect(listed.body.find((key: { id: string }) => key.id === res.body.id)).toMatchObject({ mode, livemode: mode === "live" });
  });

  it("a session's key list shows each key's own mode; a roll keeps the mode (by the key itself and by a session)", async () => {
    const tenant = await newTenant(server, "test");
    const live = await createKey(await session(tenant, "test"), { mode: "live" });
    const rolledByItself = await rest(server, "POST", `/v1/api-keys/${live.body.id}/roll`, { headers: { "x-api-key": live.body.key }, body: { expiresInHours: 1 } });
    expect(rolledByItself.status, JSON.stringify(rolledByItself.body)).toBe(200);
    expect(keyOf(rolledByItself)).toEqual({ mode: "live", livemode: true, prefix: "fpk_live_…" });
    const rolledBySession = await rest(server, "POST", `/v1/api-keys/${rolledByItself.body.id}/roll`, { headers: await session(tenant, "live") });
    expect(rolledBySession.status, JSON.stringify(rolledBySession.body)).toBe(200);
    expect(keyOf(rolledBySession)).toEqual({ mode: "live", livemode: true, prefix: "fpk_live_…" });
    const viaGraphQL = await gql(server, `mutation ($id: ID!) { rollApiKey(id: $id) { prefix mode livemode } }`, { id: rolledBySession.body.id }, await session(tenant, "live"));
    expect(viaGraphQL.body.data.rollApiKey).toMatchObject({ mode: "live", livemode: true, prefix: expect.stringMatching(/^fpk_live_/) });
  });

  it("a key made before modes (fpk_ and 12 hex digits) shows mode test", async () => {
    const tenant = await newTenant(server, "test");
    const legacy = `fpk_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
    const keyId = (await rest(server, "GET", "/v1/api-keys", { headers: tenant.headers })).body[0].id;
    await server.app.db.prisma.apiKey.update({ where: { id: keyId }, data: { prefix: legacy } });
    const listed = await gql(server, `{ apiKeys { id prefix mode livemode } }`, {}, await session(tenant, "test"));
    expect(listed.body.data.apiKeys.find((key: { id: string }) => key.id === keyId)).toEqual({ id: keyId, prefix: legacy, mode: "test", livemode: false });
  });
});
