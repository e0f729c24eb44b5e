import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest, userInput } from "./support/http.js";
import { connectWs, postGraphql, type GraphqlResult } from "./support/pipeline.js";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

type Headers = Record<string, string>;

/** The two root fields of every document: a new user (`userFields` refine its selection) and a new key. */
const userField = (email: string, firstName: string, userFields: string) => {
  const fields = Object.entries(userInput({ email, firstName })).map(([name, value]) => `${name}: ${JSON.stringify(value)}`);
  return `a: createUser(input: { ${fields.join(", ")} }) { id ${userFields} }`;
};
const keyField = `b: createApiKey(input: { name: "ci" }) { id }`;

/** Where the two fields stand in the document: at the root, or inside root-level fragments. */
const SHAPES: { shape: string; document(a: string, b: string): string }[] = [
  { shape: "plain root fields", document: (a, b) => `mutation { ${a} ${b} }` },
  { shape: "a named fragment spread", document: (a, b) => `mutation { ...Both } fragment Both on Mutation { ${a} ${b} }` },
  { shape: "an inline fragment", document: (a, b) => `mutation { ... on Mutation { ${a} ${b} } }` },
  { shape: "a field beside a nested spread in an inline fragment", document: (a, b) => `mutation { ${a} ... { ...Key } } fragment Key on Mutation { ${b} }` },
];

/** Why the document is refused before anything runs: who sends it, and what in it breaks a rule. */
const REFUSALS: { kind: string; code: string; message: RegExp; credential(tenant: Tenant): Promise<Headers>; firstName?: string; userFields?: string; keyed?: true }[] = [
  {
    kind: "the permission rule (a key with users:write only)",
    code: "FORBIDDEN",
    message: /api_keys:write/,
    credential: async (tenant) => {
      const res = await rest(server, "POST", "/v1/api-keys", { headers: tenant.headers, body: { name: "users only", permissions: { users: "write" } } });
      return { "x-api-key": res.body.key };
    },
  },
  { kind: "the text rule (a NUL in a name)", code: "BAD_USER_INPUT", message: /must not contain control/, credential: async (tenant) => tenant.headers, firstName: "Ada\u0000" },
  {
    kind: "the cost limit",
    code: "BAD_USER_INPUT",
    message: /Query cost/,
    credential: async (tenant) => tenant.headers,
    userFields: Array.from({ length: 6 }, (_, i) => `p${i}: depositsPage(limit: 1000) { id }`).join(" "),
  },
  { kind: "the one-field Idempotency-Key rule", code: "BAD_USER_INPUT", message: /exactly one mutation field/, credential: async (tenant) => tenant.headers, keyed: true },
];

/** Each transport a document with fragments can travel on (REST runs fixed documents). */
const TRANSPORTS: { name: string; send(headers: Headers, query: string, keyed: boolean): Promise<GraphqlResult> }[] = [
  {
    name: "GraphQL POST",
    send: async (headers, query, keyed) => (await postGraphql(server, "json", query, { headers: keyed ? { ...headers, "idempotency-key": crypto.randomUUID() } : headers })).body,
  },
  {
    name: "GraphQL SSE",
    send: async (headers, query, keyed) => {
      const response = await fetch(`${server.url}/graphql`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json", accept: "text/event-stream" },
        body: JSON.stringify({ query, extensions: keyed ? { idempotencyKey: crypto.randomUUID() } : undefined }),
      });
      const data = /^data: (\{.*\})$/m.exec(await response.text())?.[1];
      return data ? JSON.parse(data) : { errors: [] };
    },
  },
  {
    name: "graphql-ws",
    send: async (headers, query, keyed) => {
      const connection = connectWs(server, headers);
      try {
        const [result] = await connection.run({ query, extensions: keyed ? { idempotencyKey: crypto.randomUUID() } : undefined });
        return result;
      } finally {
        await connection.dispose();
      }
    },
  },
];

const CASES = TRANSPORTS.flatMap((transport) => REFUSALS.flatMap((refusal) => SHAPES.map((shape) => ({ ...transport, ...refusal, ...shape }))));

describe("a mutation document refused before it runs", () => {
  it.each(CASES)("over $name, refused by $kind, with $shape: each root field has its own refused entry", async ({ send, code, message, credential, firstName, userFields, keyed, document }) => {
    const tenant = await newTenant(server);
    const headers = await credential(tenant);
    const email = `refused-${crypto.randomUUID()}@example.com`;
    const before = await server.app.db.prisma.auditLogEntry.count({ where: { clientId: tenant.clientId } });
    const keysBefore = await server.app.db.prisma.apiKey.count({ where: { clientId: tenant.clientId } });

    const result = await send(headers, document(userField(email, firstName ?? "Ada", userFields ?? ""), keyField), !!keyed);
    expect(result.data ?? null, JSON.stringify(result)).toBeNull();
    expect(result.errors?.map((error) => error.extensions?.code), JSON.stringify(result)).toContain(code);
    expect(result.errors?.map((error) => error.message).join("\n")).toMatch(message);

    expect(await server.app.db.prisma.user.count({ where: { email } })).toBe(0);
    expect(await server.app.db.prisma.apiKey.count({ where: { clientId: tenant.clientId } })).toBe(keysBefore);
    const entries = await server.app.db.prisma.auditLogEntry.findMany({ where: { clientId: tenant.clientId }, orderBy: { operation: "asc" } });
    expect(entries.length).toBe(before + 2);
    const latest = entries.filter((entry) => entry.operation === "createUser" || entry.operation === "createApiKey").filter((entry) => entry.outcome === "refused");
    expect(latest.map(({ operation, outcome, targetIds }) => ({ operation, outcome, targetIds }))).toEqual([
      { operation: "createApiKey", outcome: "refused", targetIds: [] },
      { operation: "createUser", outcome: "refused", targetIds: [] },
    ]);
  });

  it("leaves out a root field that @skip drops, and logs the one it keeps", async () => {
    const tenant = await newTenant(server);
    const document = `mutation ($skip: Boolean!) { ... on Mutation { ${userField("x@example.com", "Ada\u0000", "")} } ...Key @skip(if: $skip) } fragment Key on Mutation { ${keyField} }`;
    const res = await postGraphql(server, "json", document, { headers: tenant.headers, variables: { skip: true } });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    const entries = await server.app.db.prisma.auditLogEntry.findMany({ where: { clientId: tenant.clientId } });
    expect(entries.map(({ operation, outcome }) => ({ operation, outcome }))).toEqual([{ operation: "createUser", outcome: "refused" }]);
  });
});
