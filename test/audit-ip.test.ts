import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest, userInput } from "./support/http.js";
import { connectWs, postGraphql } from "./support/pipeline.js";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";

let trusting: TestServer;
let byDefault: TestServer;
beforeAll(async () => {
  [trusting, byDefault] = await Promise.all([startServer({ env: { TRUST_PROXY: "loopback" } }), startServer()]);
}, 120_000);
afterAll(() => Promise.all([trusting, byDefault].map((server) => server?.stop())));

type Headers = Record<string, string>;
const createUserDocument = () => {
  const fields = Object.entries(userInput()).map(([name, value]) => `${name}: ${JSON.stringify(value)}`);
  return `mutation { createUser(input: { ${fields.join(", ")} }) { id } }`;
};

/** Every transport a mutation (and so an audit entry) can come by, with the request's own headers. */
const TRANSPORTS: { name: string; send(server: TestServer, headers: Headers): Promise<void> }[] = [
  {
    name: "REST",
    send: async (server, headers) => expect((await rest(server, "POST", "/v1/user", { headers, body: userInput() })).status).toBe(201),
  },
  {
    name: "GraphQL POST",
    send: async (server, headers) => expect((await postGraphql(server, "json", createUserDocument(), { headers })).status).toBe(200),
  },
  {
    name: "GraphQL SSE",
    send: async (server, headers) => {
      const response = await fetch(`${server.url}/graphql`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json", accept: "text/event-stream" },
        body: JSON.stringify({ query: createUserDocument() }),
      });
      expect(await response.text()).toContain('"createUser":{"id"');
    },
  },
  {
    name: "graphql-ws",
    send: async (server, headers) => {
      const { "x-api-key": apiKey, ...upgradeHeaders } = headers;
      const connection = connectWs(server, { "x-api-key": apiKey }, { headers: upgradeHeaders });
      try {
        const [result] = await connection.run({ query: createUserDocument() });
        expect(result.errors).toBeUndefined();
      } finally {
        await connection.dispose();
      }
    },
  },
];

/** What a trusted proxy's X-Forwarded-For may say, and the address the audit log keeps of it. */
const FORWARDED = [
  { said: "203.0.113.7", kept: "203.0.113.7" },
  { said: "2001:db8::17", kept: "2001:db8::17" },
  { said: "<script>alert(1)</script>", kept: null },
  { said: "9".repeat(6000), kept: null },
  { said: "not-an-address", kept: null },
];

const ipsLogged = async (server: TestServer, tenant: Tenant) =>
  (await server.app.db.prisma.auditLogEntry.findMany({ where: { clientId: tenant.clientId, operation: "createUser" } })).map((entry) => entry.ip);

describe.each(TRANSPORTS)("the audit entry of a mutation over $name", ({ send }) => {
  it.each(FORWARDED)("behind a trusted proxy that says $said keeps only a parsed address ($kept)", async ({ said, kept }) => {
    const tenant = await newTenant(trusting);
    await send(trusting, { ...tenant.headers, "x-forwarded-for": said });
    expect(await ipsLogged(trusting, tenant)).toEqual([kept]);
  });

  it("without TRUST_PROXY keeps the connection's address, whatever X-Forwarded-For says", async () => {
    const tenant = await newTenant(byDefault);
    await send(byDefault, { ...tenant.headers, "x-forwarded-for": "203.0.113.7" });
    expect(await ipsLogged(byDefault, tenant)).toEqual(["127.0.0.1"]);
  });
});

it("an entry without an address reads as ip: null over REST and GraphQL", async () => {
  const tenant = await newTenant(trusting);
  await TRANSPORTS[0].send(trusting, { ...tenant.headers, "x-forwarded-for": "<b>proxy</b>" });
  const listed = await rest(trusting, "GET", "/v1/audit-log", { headers: tenant.headers });
  expect(listed.status, JSON.stringify(listed.body)).toBe(200);
  expect(listed.body.data.map((entry: { ip: string | null }) => entry.ip)).toEqual([null]);
  const viaGraphql = await postGraphql(trusting, "json", "{ auditLog { edges { node { ip } } } }", { headers: tenant.headers });
  expect(viaGraphql.body).toEqual({ data: { auditLog: { edges: [{ node: { ip: null } }] } } });
});

