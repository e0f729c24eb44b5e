import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { needs, REQUIREMENTS } from "./support/requirements.js";
import pg from "pg";
import { newTenant, startServer, testDatabaseUrl, type Tenant, type TestServer } from "./support/server.js";
import { gql, rest, userInput, contractKeys } from "./support/http.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

const newKey = () => `idem-${crypto.randomUUID()}`;
const postUser = (tenant: Tenant, key: string, body: unknown) =>
  rest(server, "POST", "/v1/user", { headers: { ...tenant.headers, "idempotency-key": key }, body });
const userCount = (tenant: Tenant) => server.app.db.prisma.user.count({ where: { clientId: tenant.clientId } });

const CREATE_USER = "mutation ($input: CreateUserInput!) { createUser(input: $input) { id email } }";
const gqlWithKey = (tenant: Tenant, key: string, query: string, variables: Record<string, unknown> = {}) =>
  gql(server, query, variables, { ...tenant.headers, "idempotency-key": key });

describe("Idempotency-Key on REST", () => {
  it("replays the first response for the same key and request, creating one user", async () => {
    const tenant = await newTenant(server);
    const key = newKey();
    const input = userInput();
    const first = await postUser(tenant, key, input);
    const second = await postUser(tenant, key, input);
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expect(second.status).toBe(201);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(second.headers.get("content-type")).toMatch(/^application\/json/);
    expect(second.body).toEqual(first.body);
    expect(await userCount(tenant)).toBe(1);
  });

  it("answers 422 {error} for the same key with a different request", async () => {
    const tenant = await newTenant(server);
    const key = newKey();
    await postUser(tenant, key, userInput());
    const res = await postUser(tenant, key, userInput());
    expect(res.status).toBe(422);
    expect(contractKeys(res.body)).toEqual(["error"]);
    expect(await userCount(tenant)).toBe(1);
  });

  // A running request holds the key's advisory lock in its transaction; here a connection of the test holds it.
  it("answers 409 {error} only while the key's lock is held by a running request, then runs once (PostgreSQL)", needs(REQUIREMENTS.postgres), async () => {
    const tenant = await newTenant(server);
    const key = newKey();
    const input = userInput();
    const holder = new pg.Client({ connectionString: testDatabaseUrl });
    await holder.connect();
    try {
      await holder.query("SELECT pg_advisory_lock(hashtextextended($1, 0))", [`${tenant.clientId}:${key}`]);
      const whileHeld = await postUser(tenant, key, input);
      expect(whileHeld.status).toBe(409);
      expect(contractKeys(whileHeld.body)).toEqual(["error"]);
      expect(await userCount(tenant)).toBe(0);
      await holder.query("SELECT pg_advisory_unlock_all()");
      const released = await postUser(tenant, key, input);
      expect(released.status).toBe(201);
      expect(released.headers.get("idempotent-replayed")).toBeNull();
      expect(await userCount(tenant)).toBe(1);
    } finally {
      await holder.end();
    }
  });

  it("creates one user when duplicates race; the others are told 409 or get the replay", async () => {
    const tenant = await newTenant(server);
    const key = newKey();
    const input = userInput();
    const results = await Promise.all([1, 2, 3].map(() => postUser(tenant, key, input)));
    for (const res of results) expect([201, 409]).toContain(res.status);
    expect(results.filter((r) => r.status === 201 && r.headers.get("idempotent-replayed") === null)).toHaveLength(1);
    expect(await userCount(tenant)).toBe(1);
  });

  it("does not keep a refused request: after a 400 the fixed request runs under the same key", async () => {
    const tenant = await newTenant(server);
    const key = newKey();
    const refused = await postUser(tenant, key, userInput({ dob: "2023-02-30" }));
    expect(refused.status).toBe(400);
    const fixed = await postUser(tenant, key, userInput());
    expect(fixed.status).toBe(201);
    expect(fixed.headers.get("idempotent-replayed")).toBeNull();
  });

  it("keeps keys per client: another tenant can use the same key", async () => {
    const a = await newTenant(server);
    const b = await newTenant(server);
    const key = newKey();
    const input = userInput();
    const forA = await postUser(a, key, input);
    const forB = await postUser(b, key, input);
    expect(forB.status).toBe(201);
    expect(forB.headers.get("idempotent-replayed")).toBeNull();
    expect(forB.body.id).not.toBe(forA.body.id);
    expect(forB.body.clientId).toBe(b.clientId);
  });

  it("leaves reads alone", async () => {
    const tenant = await newTenant(server);
    const key = newKey();
    await rest(server, "GET", "/v1/user", { headers: { ...tenant.headers, "idempotency-key": key } });
    await postUser(tenant, key, userInput());
    const listed = await rest(server, "GET", "/v1/user", { headers: { ...tenant.headers, "idempotency-key": key } });
    expect(listed.headers.get("idempotent-replayed")).toBeNull();
    expect(listed.body).toHaveLength(1);
  });

  it("refuses an over-long key with 400", async () => {
    const tenant = await newTenant(server);
    const res = await postUser(tenant, "k".repeat(256), userInput());
    expect(res.status).toBe(400);
    expect(contractKeys(res.body)).toEqual(["error"]);
  });
});

describe("Idempotency-Key on GraphQL", () => {
  it("replays a mutation for the same key and variables, creating one user", async () => {
    const tenant = await newTenant(server);
    const key = newKey();
    const variables = { input: userInput() };
    const first = await gqlWithKey(tenant, key, CREATE_USER, variables);
    const second = await gqlWithKey(tenant, key, CREATE_USER, variables);
    expect(first.body.data!.createUser.id).toBeDefined();
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(second.body).toEqual(first.body);
    expect(await userCount(tenant)).toBe(1);
  });

  it("answers 422 for the same key with other variables", async () => {
    const tenant = await newTenant(server);
    const key = newKey();
    await gqlWithKey(tenant, key, CREATE_USER, { input: userInput() });
    const res = await gqlWithKey(tenant, key, CREATE_USER, { input: userInput() });
    expect(res.status).toBe(422);
    expect(await userCount(tenant)).toBe(1);
  });

  it("does not keep a mutation refused for bad input", async () => {
    const tenant = await newTenant(server);
    const key = newKey();
    const refused = await gqlWithKey(tenant, key, CREATE_USER, { input: userInput({ phoneNumber: "12" }) });
    expect(refused.body.errors![0].extensions!.code).toBe("BAD_USER_INPUT");
    const fixed = await gqlWithKey(tenant, key, CREATE_USER, { input: userInput() });
    expect(fixed.headers.get("idempotent-replayed")).toBeNull();
    expect(fixed.body.data!.createUser.id).toBeDefined();
  });

  it("leaves a query with the header alone", async () => {
    const tenant = await newTenant(server);
    const key = newKey();
    const before = await gqlWithKey(tenant, key, "{ users { id } }");
    await rest(server, "POST", "/v1/user", { headers: tenant.headers, body: userInput() });
    const after = await gqlWithKey(tenant, key, "{ users { id } }");
    expect(before.body.data!.users).toEqual([]);
    expect(after.headers.get("idempotent-replayed")).toBeNull();
    expect(after.body.data!.users).toHaveLength(1);
  });
});
