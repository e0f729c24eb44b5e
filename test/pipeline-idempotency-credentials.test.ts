import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { craftSessionToken, connectWs, postGraphql, type GraphqlResult } from "./support/pipeline.js";
import { rest } from "./support/http.js";
import { needs, REQUIREMENTS } from "./support/requirements.js";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

/** What one keyed request answered, on any transport (websockets have no status or headers). */
type Sent = { status?: number; text: string; replayed: boolean; codes: string[] };
type Headers = Record<string, string>;

const graphqlSent = (result: GraphqlResult, extra: { status?: number; replayed?: boolean } = {}): Sent => ({
  status: extra.status,
  text: JSON.stringify(result),
  replayed: extra.replayed ?? false,
  codes: (result.errors ?? []).map((error) => String(error.extensions?.code)),
});

async function overRest(method: string, path: string, headers: Headers, key: string, body: unknown): Promise<Sent> {
  const res = await rest(server, method, path, { headers: { ...headers, "idempotency-key": key }, body });
  const code = res.body?.code;
  return { status: res.status, text: JSON.stringify(res.body), replayed: res.headers.get("idempotent-replayed") === "true", codes: code ? [code] : [] };
}

/** The operation as GraphQL: a new key (createApiKey), or the roll of `target` (rollApiKey). */
const documentOf = (operation: Operation, target: string) =>
  operation === "createApiKey" ? `mutation { createApiKey(input: { name: "ci" }) { id key } }` : `mutation { rollApiKey(id: "${target}") { id key } }`;
type Operation = "createApiKey" | "rollApiKey";

/** Each way an Idempotency-Key travels with a key-making mutation. */
const TRANSPORTS: { name: string; operation: Operation; send(headers: Headers, key: string, target: string): Promise<Sent> }[] = [
  { name: "REST POST /v1/api-keys", operation: "createApiKey", send: (headers, key) => overRest("POST", "/v1/api-keys", headers, key, { name: "ci" }) },
  { name: "REST POST /v1/api-keys/{id}/roll", operation: "rollApiKey", send: (headers, key, target) => overRest("POST", `/v1/api-keys/${target}/roll`, headers, key, {}) },
  ...(["createApiKey", "rollApiKey"] as const).flatMap((operation) => [
    {
      name: `GraphQL POST ${operation}, Idempotency-Key header`,
      operation,
      send: async (headers: Headers, key: string, target: string) => {
        const res = await postGraphql(server, "json", documentOf(operation, target), { headers: { ...headers, "idempotency-key": key } });
        return graphqlSent(res.body, { status: res.status, replayed: res.headers.get("idempotent-replayed") === "true" });
      },
    },
    {
      name: `GraphQL POST ${operation}, extensions.idempotencyKey`,
      operation,
      send: async (headers: Headers, key: string, target: string) => {
        const res = await rest(server, "POST", "/graphql", {
          headers: { ...headers, accept: "application/graphql-response+json" },
          body: { query: documentOf(operation, target), extensions: { idempotencyKey: key } },
        });
        return graphqlSent(res.body, { status: res.status, replayed: res.headers.get("idempotent-replayed") === "true" });
      },
    },
    {
      name: `GraphQL SSE ${operation}, extensions.idempotencyKey`,
      operation,
      send: async (headers: Headers, key: string, target: string) => {
        const response = await fetch(`${server.url}/graphql`, {
          method: "POST",
          headers: { ...headers, "content-type": "application/json", accept: "text/event-stream" },
          body: JSON.stringify({ query: documentOf(operation, target), extensions: { idempotencyKey: key } }),
        });
        const text = await response.text();
        const data = /^data: (\{.*\})$/m.exec(text)?.[1];
        return graphqlSent(data ? JSON.parse(data) : { errors: [{ message: text }] }, { replayed: response.headers.get("idempotent-replayed") === "true" });
      },
    },
    {
      name: `graphql-ws ${operation}, extensions.idempotencyKey`,
      operation,
      send: async (headers: Headers, key: string, target: string) => {
        const connection = connectWs(server, headers);
        try {
          const [result] = await connection.run({ query: documentOf(operation, target), extensions: { idempotencyKey: key } });
          return graphqlSent(result);
        } finally {
          await connection.dispose();
        }
      },
    },
  ]),
];

async function restrictedKey(tenant: Tenant, permissions: Record<string, string>) {
  const res = await rest(server, "POST", "/v1/api-keys", { headers: tenant.headers, body: { name: "restricted", permissions } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { id: res.body.id as string, headers: { "x-api-key": res.body.key as string } };
}

const secretOf = (sent: Sent) => /"key":"([^"]+)"/.exec(sent.text)?.[1];

describe.each(TRANSPORTS)("a kept answer of $name", ({ operation, send }) => {
  it("replays only to the credential that made it: a weaker key, a session and a key without the permission never see the full key's answer", async () => {
    const tenant = await newTenant(server);
    const target = (await rest(server, "POST", "/v1/api-keys", { headers: tenant.headers, body: { name: "target" } })).body.id as string;
    const writer = await restrictedKey(tenant, { api_keys: "write" });
    const reader = await restrictedKey(tenant, { users: "read" });
    const session = { "x-client-auth": await craftSessionToken(server, tenant.clientId) };
    const key = `credential-${crypto.randomUUID()}`;

    const first = await send(tenant.headers, key, target);
    if (first.status !== undefined) expect(first.status, first.text).toBe(200);
    const secret = secretOf(first);
    expect(secret, first.text).toMatch(/^fpk_/);

    // Another credential of the same client under the same key: refused before any replay, and audited.
    const refusals = [
      { actor: writer.id, headers: writer.headers, status: 422, code: "IDEMPOTENCY_MISMATCH" },
      { actor: reader.id, headers: reader.headers, status: 403, code: "FORBIDDEN" },
    ];
    for (const { actor, headers, status, code } of refusals) {
      const before = await server.app.db.prisma.apiKey.count({ where: { clientId: tenant.clientId } });
      const answer = await send(headers, key, target);
      expect(answer.text).not.toContain(secret);
      expect(answer.replayed).toBe(false);
      if (answer.status !== undefined) expect(answer.status, answer.text).toBe(status);
      expect(answer.codes, answer.text).toContain(code);
      expect(await server.app.db.prisma.apiKey.count({ where: { clientId: tenant.clientId } })).toBe(before);
      const entries = await server.app.db.prisma.auditLogEntry.findMany({ where: { clientId: tenant.clientId, actorId: actor } });
      expect(entries.map(({ operation, outcome, targetIds }) => ({ operation, outcome, targetIds }))).toEqual([{ operation, outcome: "refused", targetIds: [] }]);
    }
    const bySession = await send(session, key, target);
    expect(bySession.text).not.toContain(secret);
    expect(bySession.codes, bySession.text).toContain("IDEMPOTENCY_MISMATCH");

    // The credential that made it still gets its answer back.
    const replay = await send(tenant.headers, key, target);
    expect(secretOf(replay), replay.text).toBe(secret);
  });
});

// Concurrent transactions: only PostgreSQL runs them at once.
describe("two credentials racing under one key", needs(REQUIREMENTS.postgres), () => {
  it("share one lock (per client and key): one runs, the other is refused 409 or 422, and never gets the first one's answer", async () => {
    const [rest, graphql] = [TRANSPORTS[0], TRANSPORTS[2]];
    for (let round = 0; round < 5; round++) {
      const tenant = await newTenant(server);
      // A session, not a restricted key: both credentials may create a full key, so whichever wins the lock runs.
      const session = { "x-client-auth": await craftSessionToken(server, tenant.clientId) };
      const before = await server.app.db.prisma.apiKey.count({ where: { clientId: tenant.clientId } });
      const key = `race-${crypto.randomUUID()}`;
      const [full, bySession] = await Promise.all([rest.send(tenant.headers, key, ""), graphql.send(session, key, "")]);
      const made = await server.app.db.prisma.apiKey.count({ where: { clientId: tenant.clientId } });
      expect(made - before, JSON.stringify([full, bySession])).toBe(1);
      const winner = secretOf(full) ?? secretOf(bySession);
      expect(winner).toMatch(/^fpk_/);
      // Exactly one ran; the other was refused (409 while the first ran, 422 after), never answered with its secret.
      expect([full, bySession].filter((sent) => secretOf(sent) === winner)).toHaveLength(1);
      const loser = secretOf(full) ? bySession : full;
      expect(loser.codes.some((code) => code === "CONFLICT" || code === "IDEMPOTENCY_MISMATCH"), loser.text).toBe(true);
    }
  });
});
