import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newTenant, type Tenant, type TestServer } from "./support/server.js";
import { errorCodes, gql, rest, contractKeys } from "./support/http.js";
import { signIn, startServerWithMailbox, type Mailbox } from "./support/mailbox.js";
import { MAX_ACTIVE_KEYS } from "../src/keys/service.js";
import { UNBOUNDED } from "../src/keys/authority.js";

let server: TestServer;
let mailbox: Mailbox;
beforeAll(async () => {
  ({ server, mailbox } = await startServerWithMailbox());
});
afterAll(() => server?.stop());

const LISTED_FIELDS = ["allowedIps", "createdAt", "expiresAt", "id", "lastUsedAt", "livemode", "mode", "name", "permissions", "prefix", "revokedAt"];
const createKey = (tenant: Pick<Tenant, "headers">) => rest(server, "POST", "/v1/api-keys", { headers: tenant.headers });
const listKeys = (tenant: Pick<Tenant, "headers">) => rest(server, "GET", "/v1/api-keys", { headers: tenant.headers });

describe("POST /v1/api-keys", () => {
  it("answers 200 with the contract's {id, key, prefix, createdAt} (plus name, permissions, expiresAt and allowedIps, null unless sent); the key works and starts with its prefix", async () => {
    const tenant = await newTenant(server);
    const res = await createKey(tenant);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(["allowedIps", "createdAt", "expiresAt", "id", "key", "livemode", "mode", "name", "permissions", "prefix"]);
    expect(res.body).toMatchObject({ name: null, permissions: null, expiresAt: null, allowedIps: null });
    expect(res.body.key.startsWith(res.body.prefix)).toBe(true);
    expect(res.body.key.length - res.body.prefix.length).toBeGreaterThanOrEqual(22); // ≥ 128 bits of secret
    const me = await gql(server, "{ me { id } }", {}, { "x-api-key": res.body.key });
    expect(me.body.data.me.id).toBe(tenant.clientId);
  });

  it("stores only a hash of the key", async () => {
    const tenant = await newTenant(server);
    const { body } = await createKey(tenant);
    const row = await server.app.db.prisma.apiKey.findUniqueOrThrow({ where: { id: body.id } });
    expect(JSON.stringify(row)).not.toContain(body.key.slice(body.prefix.length + 1));
  });

  it("works from an OTP session: the first key of a new client", async () => {
    const session = await signIn(server, mailbox);
    const created = await createKey(session);
    expect(created.status).toBe(200);
    const keyHeaders = { "x-api-key": created.body.key };
    const listed = await listKeys({ headers: keyHeaders });
    expect(listed.status).toBe(200);
    expect(listed.body.map((k: { id: string }) => k.id)).toEqual([created.body.id]);
  });

  it("needs credentials", async () => {
    const res = await rest(server, "POST", "/v1/api-keys");
    expect(res.status).toBe(401);
    expect(contractKeys(res.body)).toEqual(["error"]);
  });
});

describe("GET /v1/api-keys", () => {
  it("lists the client's keys with {id, prefix, createdAt, lastUsedAt, revokedAt, expiresAt, allowedIps}, never the key or its hash", async () => {
    const tenant = await newTenant(server);
    const created = await createKey(tenant);
    const res = await listKeys(tenant);
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(2);
    for (const key of res.body) expect(Object.keys(key).sort()).toEqual(LISTED_FIELDS);
    const text = JSON.stringify(res.body);
    for (const secret of [tenant.apiKey, created.body.key]) expect(text).not.toContain(secret.split(".")[1]);
    const listedNew = res.body.find((k: { id: string }) => k.id === created.body.id);
    expect(listedNew).toEqual({ ...created.body, key: undefined, lastUsedAt: null, revokedAt: null });
  });

  it("shows only the calling client's keys", async () => {
    const a = await newTenant(server);
    const b = await newTenant(server);
    const aKey = await createKey(a);
    const bIds = (await listKeys(b)).body.map((k: { id: string }) => k.id);
    expect(bIds).toHaveLength(1);
    expect(bIds).not.toContain(aKey.body.id);
  });

  it("sets lastUsedAt once a key is used", async () => {
    const tenant = await newTenant(server);
    const created = await createKey(tenant);
    const lastUsed = async () => (await listKeys(tenant)).body.find((k: { id: string }) => k.id === created.body.id).lastUsedAt;
    expect(await lastUsed()).toBeNull();
    const before = Date.now();
    await rest(server, "GET", "/v1/user", { headers: { "x-api-key": created.body.key } });
    // Written just after the request (test/api-key-lifecycle.test.ts shows the request never waits for it).
    await expect.poll(lastUsed, { timeout: 5000 }).not.toBeNull();
    const used = await lastUsed();
    expect(Date.parse(used)).toBeGreaterThanOrEqual(before - 1000);
  });
});

describe("the bound on a client's keys", () => {
  it(`refuses a key beyond ${MAX_ACTIVE_KEYS} active ones (400) until one is revoked, and lists the active and the recently revoked`, async () => {
    const tenant = await newTenant(server);
    for (let i = 1; i < MAX_ACTIVE_KEYS; i++) await server.app.services.keys.create(tenant.clientId, undefined, UNBOUNDED);
    const refused = await rest(server, "POST", "/v1/api-keys", { headers: tenant.headers });
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(refused.body.error).toBe(`A client has at most ${MAX_ACTIVE_KEYS} active API keys: revoke one first`);
    const listed = (await rest(server, "GET", "/v1/api-keys", { headers: tenant.headers })).body as { id: string }[];
    expect(listed).toHaveLength(MAX_ACTIVE_KEYS);
    expect((await rest(server, "DELETE", `/v1/api-keys/${listed[1].id}`, { headers: tenant.headers })).status).toBe(200);
    expect((await rest(server, "POST", "/v1/api-keys", { headers: tenant.headers })).status).toBe(200);
    const after = (await rest(server, "GET", "/v1/api-keys", { headers: tenant.headers })).body as { id: string; revokedAt: string | null }[];
    expect(after).toHaveLength(MAX_ACTIVE_KEYS + 1);
    expect(after.filter((key) => key.revokedAt)).toEqual([expect.objectContaining({ id: listed[1].id })]);
  });
});

describe("DELETE /v1/api-keys/{keyId}", () => {
  it("revokes the key (200); it is refused at once and listed with revokedAt", async () => {
    const tenant = await newTenant(server);
    const created = await createKey(tenant);
    const res = await rest(server, "DELETE", `/v1/api-keys/${created.body.id}`, { headers: tenant.headers });
    expect(res.status).toBe(200);
    expect((await rest(server, "GET", "/v1/user", { headers: { "x-api-key": created.body.key } })).status).toBe(401);
    const listed = (await listKeys(tenant)).body.find((k: { id: string }) => k.id === created.body.id);
    expect(listed.revokedAt).not.toBeNull();
  });

  it("is idempotent: revoking again answers 200 and keeps the first revokedAt", async () => {
    const tenant = await newTenant(server);
    const created = await createKey(tenant);
    await rest(server, "DELETE", `/v1/api-keys/${created.body.id}`, { headers: tenant.headers });
    const revokedAt = (await listKeys(tenant)).body.find((k: { id: string }) => k.id === created.body.id).revokedAt;
    const again = await rest(server, "DELETE", `/v1/api-keys/${created.body.id}`, { headers: tenant.headers });
    expect(again.status).toBe(200);
    expect((await listKeys(tenant)).body.find((k: { id: string }) => k.id === created.body.id).revokedAt).toBe(revokedAt);
  });

  it("answers 404 {message} for an unknown key", async () => {
    const tenant = await newTenant(server);
    const res = await rest(server, "DELETE", `/v1/api-keys/${crypto.randomUUID()}`, { headers: tenant.headers });
    expect(res.status).toBe(404);
    expect(contractKeys(res.body)).toEqual(["message"]);
  });

  it("answers 404 {message} for another client's key, which keeps working", async () => {
    const a = await newTenant(server);
    const b = await newTenant(server);
    const aKey = await createKey(a);
    const res = await rest(server, "DELETE", `/v1/api-keys/${aKey.body.id}`, { headers: b.headers });
    expect(res.status).toBe(404);
    expect(contractKeys(res.body)).toEqual(["message"]);
    expect((await rest(server, "GET", "/v1/user", { headers: { "x-api-key": aKey.body.key } })).status).toBe(200);
  });

  it("answers 400 {error} for a key id that is not a UUID", async () => {
    const tenant = await newTenant(server);
    const res = await rest(server, "DELETE", "/v1/api-keys/not-a-uuid", { headers: tenant.headers });
    expect(res.status).toBe(400);
    expect(contractKeys(res.body)).toEqual(["error"]);
    expect(res.body.error).toMatch(/keyId/);
  });
});

describe("API keys over GraphQL", () => {
  it("createApiKey, apiKeys and revokeApiKey behave as on REST", async () => {
    const tenant = await newTenant(server);
    const created = (await gql(server, "mutation { createApiKey { id key prefix } }", {}, tenant.headers)).body.data.createApiKey;
    const listed = (await gql(server, "{ apiKeys { id prefix revokedAt } }", {}, tenant.headers)).body.data.apiKeys;
    expect(listed).toContainEqual({ id: created.id, prefix: created.prefix, revokedAt: null });
    const revoked = await gql(server, "mutation ($id: ID!) { revokeApiKey(id: $id) { id revokedAt } }", { id: created.id }, tenant.headers);
    expect(revoked.body.data.revokeApiKey.revokedAt).not.toBeNull();
    const other = await newTenant(server);
    const foreign = await gql(server, "mutation ($id: ID!) { revokeApiKey(id: $id) { id } }", { id: listed[0].id }, other.headers);
    expect(errorCodes(foreign)).toEqual(["NOT_FOUND"]);
    const malformed = await gql(server, `mutation { revokeApiKey(id: "nope") { id } }`, {}, tenant.headers);
    expect(errorCodes(malformed)).toEqual(["BAD_USER_INPUT"]);
  });
});

describe("keys in the log", () => {
  it("never writes a full API key to the server log", async () => {
    const tenant = await newTenant(server);
    const created = await createKey(tenant);
    const headers = { "x-api-key": created.body.key };
    await rest(server, "GET", "/v1/api-keys", { headers });
    await rest(server, "POST", "/v1/user", { headers, rawBody: "{broken" });
    await gql(server, "{ nope }", {}, headers);
    await rest(server, "DELETE", `/v1/api-keys/${created.body.id}`, { headers });
    await rest(server, "GET", "/v1/user", { headers });
    const log = server.logs.join("\n");
    for (const key of [tenant.apiKey, created.body.key]) expect(log).not.toContain(key.split(".")[1]);
  });
});
