import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAudited, type AuditScope } from "../src/db/audit-scope.js";
import type { AuthenticatedClient } from "../src/caller/authenticated-client.js";
import { inTransaction } from "../src/db/transaction.js";
import { createUser, gql, rest, userInput } from "./support/http.js";
import { startServerWithMailbox, type Mailbox } from "./support/mailbox.js";
import { newTenant, type Tenant, type TestServer } from "./support/server.js";
import { connectWs } from "./support/pipeline.js";

let server: TestServer;
let mailbox: Mailbox;
beforeAll(async () => {
  ({ server, mailbox } = await startServerWithMailbox());
});
afterAll(() => server?.stop());

type Entry = { id: string; at: string; actor: { type: string; id: string }; operation: string; targetIds: string[]; requestId: string; ip: string; outcome: string };
const auditLog = async (tenant: Pick<Tenant, "headers">, query = "") => {
  const res = await rest<{ data: Entry[]; hasMore: boolean }>(server, "GET", `/v1/audit-log${query}`, { headers: tenant.headers });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};
const entriesOf = (tenant: Tenant) => server.app.db.prisma.auditLogEntry.findMany({ where: { clientId: tenant.clientId } });

describe("GET /v1/audit-log and auditLog", () => {
  it("records who did what, newest first: actor, operation (the root field, REST included), targets, request id, address, outcome", async () => {
    const tenant = await newTenant(server);
    const keyId = (await rest(server, "GET", "/v1/api-keys", { headers: tenant.headers })).body[0].id;
    const created = await rest(server, "POST", "/v1/user", { headers: { ...tenant.headers, "x-request-id": "req-audit-1" }, body: userInput() });
    expect(created.status).toBe(201);
    const duplicate = await rest(server, "POST", "/v1/user", { headers: tenant.headers, body: userInput({ email: created.body.email }) });
    expect(duplicate.status).toBe(400);
    const { data, hasMore } = await auditLog(tenant);
    expect(hasMore).toBe(false);
    expect(data).toEqual([
      { id: expect.any(String), at: expect.any(String), actor: { type: "api_key", id: keyId }, operation: "createUser", targetIds: [], requestId: duplicate.body.requestId, ip: expect.any(String), outcome: "refused", livemode: false },
      { id: expect.any(String), at: expect.any(String), actor: { type: "api_key", id: keyId }, operation: "createUser", targetIds: [created.body.id], requestId: "req-audit-1", ip: expect.any(String), outcome: "succeeded", livemode: false },
    ]);
    expect(data[0].ip).toMatch(/127\.0\.0\.1/);
    // GraphQL: the same entries, as a connection, with enums.
    const viaGraphQL = await gql(server, `{ auditLog { edges { cursor node { id operation outcome actor { type id } targetIds } } pageInfo { hasNextPage endCursor } } }`, {}, tenant.headers);
    expect(viaGraphQL.body.data.auditLog.edges.map((edge: { node: unknown }) => edge.node)).toEqual([
      { id: data[0].id, operation: "createUser", outcome: "REFUSED", actor: { type: "API_KEY", id: keyId }, targetIds: [] },
      { id: data[1].id, operation: "createUser", outcome: "SUCCEEDED", actor: { type: "API_KEY", id: keyId }, targetIds: [created.body.id] },
    ]);
  });

  it("pages with after (an entry id) and limit; a session is the actor of what it does", async () => {
    const tenant = await newTenant(server);
    for (let i = 0; i < 3; i++) await createUser(server, tenant);
    const first = await auditLog(tenant, "?limit=2");
    expect([first.data.length, first.hasMore]).toEqual([2, true]);
    const second = await auditLog(tenant, `?limit=2&after=${first.data[1].id}`);
    expect([second.data.length, second.hasMore]).toEqual([1, false]);
    expect(new Set([...first.data, ...second.data].map((entry) => entry.id)).size).toBe(3);
    expect((await rest(server, "GET", "/v1/audit-log?limit=0", { headers: tenant.headers })).status).toBe(400);
    expect((await rest(server, "GET", `/v1/audit-log?after=${randomUUID()}`, { headers: tenant.headers })).status).toBe(400);
  });

  it("is tenant isolated: another client's entries are never listed, and their ids are no cursor (400)", async () => {
    const [a, b] = [await newTenant(server), await newTenant(server)];
    await createUser(server, a);
    const [entryOfA] = (await auditLog(a)).data;
    expect((await auditLog(b)).data).toEqual([]);
    const cursor = await rest(server, "GET", `/v1/audit-log?after=${entryOfA.id}`, { headers: b.headers });
    expect(cursor.status).toBe(400);
    const viaGraphQL = await gql(server, `query ($after: ID) { auditLog(after: $after) { edges { node { id } } } }`, { after: entryOfA.id }, b.headers);
    expect(viaGraphQL.body.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
  });
});

describe("an entry and its effect commit together", () => {
  it("the entry of an operation that acted is written by the effect's own transaction (same PostgreSQL transaction id)", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const [entry] = await entriesOf(tenant);
    expect(entry).toMatchObject({ operation: "createUser", targetIds: [userId], outcome: "succeeded" });
    const [user] = await server.app.db.prisma.$queryRawUnsafe<{ xmin: string }[]>(`SELECT xmin::text AS xmin FROM "users" WHERE "id" = $1::uuid`, userId);
    const [audited] = await server.app.db.prisma.$queryRawUnsafe<{ xmin: string }[]>(`SELECT xmin::text AS xmin FROM "audit_log" WHERE "id" = $1::uuid`, entry.id);
    expect(audited.xmin).toBe(user.xmin);
  });

  it("a transaction that fails after writing leaves neither its effect nor a succeeded entry; one that commits leaves both", async () => {
    const tenant = await newTenant(server);
    const caller: AuthenticatedClient = { clientId: tenant.clientId, mode: "test", accountId: tenant.clientId, method: "API_KEY", credentialId: randomUUID(), permissions: null };
    const scopeFor = (): AuditScope => ({
      entry: server.app.services.audit.entry(caller, "createUser", { transport: "rest", credentials: {}, ip: "127.0.0.1", requestId: randomUUID() }),
      open: true,
    });
    const data = () => ({ ...userInput(), dob: new Date("1990-01-01T00:00:00Z"), clientId: tenant.clientId });
    const failing = scopeFor();
    const email = `${randomUUID()}@example.com`;
    await expect(
      runAudited(failing, () =>
        inTransaction(server.app.db.prisma, async (tx) => {
          await tx.user.create({ data: { ...data(), email } });
          throw new Error("fails after writing");
        }),
      ),
    ).rejects.toThrow("fails after writing");
    expect(await server.app.db.prisma.user.findFirst({ where: { email } })).toBeNull();
    expect(await server.app.db.prisma.auditLogEntry.findUnique({ where: { id: failing.entry.id } })).toBeNull();
    // The same through the plain SQL transactions (the ledger's).
    const failingSql = scopeFor();
    await expect(runAudited(failingSql, () => server.app.db.sql.transaction(async () => { throw new Error("fails in SQL"); }))).rejects.toThrow();
    expect(await server.app.db.prisma.auditLogEntry.findUnique({ where: { id: failingSql.entry.id } })).toBeNull();
    const succeeding = scopeFor();
    const user = await runAudited(succeeding, () => inTransaction(server.app.db.prisma, (tx) => tx.user.create({ data: data() })));
    expect(await server.app.db.prisma.auditLogEntry.findUnique({ where: { id: succeeding.entry.id } })).toMatchObject({ targetIds: [user.id], outcome: "succeeded" });
  });

  it("over HTTP, a mutation refused inside its transaction (a duplicate e-mail) leaves a refused entry without targets and no succeeded one", async () => {
    const tenant = await newTenant(server);
    const input = userInput();
    await rest(server, "POST", "/v1/user", { headers: tenant.headers, body: input });
    const refused = await rest(server, "POST", "/v1/user", { headers: tenant.headers, body: input });
    expect(refused.status).toBe(400);
    const entries = (await entriesOf(tenant)).filter((entry) => entry.requestId === refused.body.requestId);
    expect(entries.map((entry) => [entry.outcome, entry.targetIds])).toEqual([["refused", []]]);
  });
});

describe("no secret ever appears in the audit log", () => {
  it("after keys, sign-in codes, session tokens, webhook secrets and cards are made, a dump of the whole table holds none of them", async () => {
    const tenant = await newTenant(server);
    const secrets: string[] = [];
    const key = await rest(server, "POST", "/v1/api-keys", { headers: tenant.headers, body: { name: "dump", permissions: { users: "read" } } });
    secrets.push(key.body.key, key.body.key.split(".")[1]);
    // Sign-in operations sent with a credential are audited too (an anonymous one has no client to be logged for).
    const email = `audit-${randomUUID()}@example.com`;
    expect((await rest(server, "POST", "/v1/client-auth/otp", { headers: tenant.headers, body: { email } })).status).toBe(200);
    const otp = await mailbox.codeFor(email);
    const verified = await rest(server, "POST", "/v1/client-auth/verify", { headers: tenant.headers, body: { email, otp } });
    expect(verified.status).toBe(200);
    secrets.push(otp, verified.body.token);
    const viaSession = await rest(server, "POST", "/v1/api-keys", { headers: { "x-client-auth": verified.body.token } });
    secrets.push(viaSession.body.key);
    const endpoint = await rest(server, "POST", "/v1/webhook-endpoints", { headers: tenant.headers, body: { url: "https://hooks.example.com/audit" } });
    expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
    const rotated = await rest(server, "POST", `/v1/webhook-endpoints/${endpoint.body.id}/rotate-secret`, { headers: tenant.headers });
    secrets.push(endpoint.body.secret, rotated.body.secret);
    const userId = await createUser(server, tenant);
    const card = await rest(server, "POST", "/v1/virtual-cards", { headers: tenant.headers, body: { userId } });
    expect(card.status).toBeLessThan(300);
    for (const value of Object.values(card.body as Record<string, unknown>)) if (typeof value === "string" && /^\d{12,19}$/.test(value)) secrets.push(value);
    await rest(server, "POST", "/v1/client-auth/logout", { headers: { "x-client-auth": verified.body.token } });

    const ours = await entriesOf(tenant);
    expect(ours.map((entry) => entry.operation)).toEqual(expect.arrayContaining(["createApiKey", "requestOtp", "verifyOtp", "createWebhookEndpoint", "rotateWebhookEndpointSecret", "createVirtualCard"]));
    const dump = JSON.stringify(await server.app.db.prisma.$queryRawUnsafe(`SELECT * FROM "audit_log"`));
    expect(secrets.filter(Boolean).length).toBeGreaterThanOrEqual(7);
    for (const secret of secrets.filter(Boolean)) expect(dump, "a secret in the audit log").not.toContain(secret);
  });
});

describe("the targets of key operations", () => {
  type Sent = { status?: number; id?: string };
  const graphqlOver = (transport: "http" | "graphql-ws") => async (tenant: Tenant, query: string): Promise<Sent> => {
    if (transport === "http") {
      const res = await gql(server, query, {}, tenant.headers);
      const [result] = Object.values(res.body.data ?? {}) as { id?: string }[];
      return { status: res.status, id: result?.id };
    }
    const connection = connectWs(server, tenant.headers);
    try {
      const [result] = await connection.run({ query });
      const [field] = Object.values(result.data ?? {}) as { id?: string }[];
      return { id: field?.id };
    } finally {
      await connection.dispose();
    }
  };
  const TRANSPORTS: { name: string; roll(tenant: Tenant, id: string): Promise<Sent>; revoke(tenant: Tenant, id: string): Promise<Sent> }[] = [
    {
      name: "REST",
      roll: async (tenant, id) => {
        const res = await rest(server, "POST", `/v1/api-keys/${id}/roll`, { headers: tenant.headers, body: {} });
        return { status: res.status, id: res.body.id };
      },
      revoke: async (tenant, id) => ({ status: (await rest(server, "DELETE", `/v1/api-keys/${id}`, { headers: tenant.headers })).status }),
    },
    ...(["http", "graphql-ws"] as const).map((transport) => ({
      name: transport === "http" ? "GraphQL POST" : "graphql-ws",
      roll: (tenant: Tenant, id: string) => graphqlOver(transport)(tenant, `mutation { rollApiKey(id: "${id}") { id } }`),
      revoke: (tenant: Tenant, id: string) => graphqlOver(transport)(tenant, `mutation { revokeApiKey(id: "${id}") { id } }`),
    })),
  ];
  const newKeyOf = async (tenant: Tenant) => (await rest(server, "POST", "/v1/api-keys", { headers: tenant.headers, body: { name: "target" } })).body.id as string;
  const entriesFor = async (tenant: Tenant, operation: string) =>
    (await server.app.db.prisma.auditLogEntry.findMany({ where: { clientId: tenant.clientId, operation }, orderBy: [{ at: "asc" }, { id: "asc" }] })).map(
      ({ outcome, targetIds }) => ({ outcome, targetIds: [...targetIds].sort() }),
    );

  it.each(TRANSPORTS)("over $name, rollApiKey lists the rolled key and its successor", async ({ roll }) => {
    const tenant = await newTenant(server);
    const rolled = await newKeyOf(tenant);
    const successor = await roll(tenant, rolled);
    if (successor.status !== undefined) expect(successor.status).toBe(200);
    expect(successor.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(await entriesFor(tenant, "rollApiKey")).toEqual([{ outcome: "succeeded", targetIds: [rolled, successor.id].sort() }]);
  });

  it.each(TRANSPORTS)("over $name, revoking a revoked key answers as the first time (200) and is logged succeeded with no target: nothing changed", async ({ revoke }) => {
    const tenant = await newTenant(server);
    const key = await newKeyOf(tenant);
    for (let attempt = 0; attempt < 2; attempt++) {
      const answer = await revoke(tenant, key);
      if (answer.status !== undefined) expect(answer.status).toBe(200);
    }
    const entries = await entriesFor(tenant, "revokeApiKey");
    expect(entries).toHaveLength(2);
    expect(entries).toEqual(expect.arrayContaining([{ outcome: "succeeded", targetIds: [key] }, { outcome: "succeeded", targetIds: [] }]));
  });
});
