import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_CODES, type ErrorCode } from "../src/errors.js";
import { createUser, gql, rest, type HttpResult } from "./support/http.js";
import { postGraphql, type GraphqlResult } from "./support/pipeline.js";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";

/**
 * The one rule for the status of a GraphQL answer over HTTP (docs/http-edge.md): an answer without a
 * `data` entry (refused before any field ran) has its error's status; an answer with one, even
 * null, is 200, and what failed is in `errors[].extensions.code`. The exception is GraphQL over
 * HTTP's own: under `application/json`, a document that fails validation is 200 as well. REST
 * answers each code with its status either way.
 */
let server: TestServer;
let tenant: Tenant;
let live: Tenant;
let userEventId: string;
beforeAll(async () => {
  server = await startServer();
  [tenant, live] = await Promise.all([newTenant(server), newTenant(server, "live")]);
  const userId = await createUser(server, tenant);
  const feed = await rest(server, "GET", "/v1/events?type=user.created&limit=100", { headers: tenant.headers });
  userEventId = feed.body.data.find((event: { data: { object: { id: string } } }) => event.data.object.id === userId).id;
});
afterAll(() => server?.stop());

async function keyWith(body: Record<string, unknown>): Promise<Record<string, string>> {
  const created = await rest(server, "POST", "/v1/api-keys", { headers: tenant.headers, body });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return { "x-api-key": created.body.key };
}
const restricted = (permissions: Record<string, string>) => keyWith({ permissions });

type Case = {
  refusal: string;
  code: ErrorCode;
  /** Whether the operation ran (the answer has a `data` entry): what the rule reads. */
  ran: boolean;
  graphql: () => Promise<HttpResult<GraphqlResult>>;
  /** The same refusal over REST, where the table has it. */
  rest?: () => Promise<HttpResult>;
};

const CASES: Case[] = [
  {
    refusal: "event(id) of a type the key may not read",
    code: "FORBIDDEN",
    ran: true,
    graphql: async () => gql(server, "query ($id: ID!) { event(id: $id) { id } }", { id: userEventId }, await restricted({ events: "read", deposits: "read" })),
    rest: async () => rest(server, "GET", `/v1/events/${userEventId}`, { headers: await restricted({ events: "read", deposits: "read" }) }),
  },
  {
    refusal: "events(types:) naming a type the key may not read",
    code: "FORBIDDEN",
    ran: true,
    graphql: async () => gql(server, `{ events(types: ["user.created"]) { edges { cursor } } }`, {}, await restricted({ events: "read", deposits: "read" })),
    rest: async () => rest(server, "GET", "/v1/events?type=user.created", { headers: await restricted({ events: "read", deposits: "read" }) }),
  },
  {
    refusal: "createWebhookEndpoint without events, by a key that cannot read every type",
    code: "FORBIDDEN",
    ran: true,
    graphql: async () =>
      gql(server, "mutation ($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { id } }", { input: { url: "https://127.0.0.1/hooks" } }, await restricted({ events: "write" })),
    rest: async () => rest(server, "POST", "/v1/webhook-endpoints", { headers: await restricted({ events: "write" }), body: { url: "https://127.0.0.1/hooks" } }),
  },
  {
    refusal: "a restricted key creating a full key",
    code: "FORBIDDEN",
    ran: true,
    graphql: async () => gql(server, "mutation { createApiKey { id } }", {}, await restricted({ api_keys: "write" })),
    rest: async () => rest(server, "POST", "/v1/api-keys", { headers: await restricted({ api_keys: "write" }) }),
  },
  {
    refusal: "a sandbox helper in live mode",
    code: "TEST_MODE_ONLY",
    ran: true,
    graphql: () => gql(server, `mutation { simulateDeposit(input: { userId: "${crypto.randomUUID()}", currency: NGN, amount: "1" }) { id } }`, {}, live.headers),
    rest: () => rest(server, "POST", "/v1/sandbox/deposits", { headers: live.headers, body: { userId: crypto.randomUUID(), currency: "NGN", amount: 1 } }),
  },
  {
    refusal: "a user that does not exist",
    code: "NOT_FOUND",
    ran: true,
    graphql: () => gql(server, "query ($id: ID!) { user(id: $id) { id } }", { id: crypto.randomUUID() }, tenant.headers),
    rest: () => rest(server, "GET", `/v1/user/${crypto.randomUUID()}`, { headers: tenant.headers }),
  },
  {
    refusal: "an operation needing a permission the key lacks (the permission rule)",
    code: "FORBIDDEN",
    ran: false,
    graphql: async () => gql(server, "{ users { id } }", {}, await restricted({ events: "read" })),
    rest: async () => rest(server, "GET", "/v1/user", { headers: await restricted({ events: "read" }) }),
  },
  {
    refusal: "a key used from outside its allowlist",
    code: "FORBIDDEN",
    ran: false,
    graphql: async () => gql(server, "{ users { id } }", {}, await keyWith({ allowedIps: ["203.0.113.0/24"] })),
    rest: async () => rest(server, "GET", "/v1/user", { headers: await keyWith({ allowedIps: ["203.0.113.0/24"] }) }),
  },
  {
    refusal: "no credential",
    code: "UNAUTHENTICATED",
    ran: false,
    graphql: () => gql(server, "{ users { id } }"),
    rest: () => rest(server, "GET", "/v1/user"),
  },
  {
    refusal: "a document that fails validation (application/graphql-response+json)",
    code: "BAD_USER_INPUT",
    ran: false,
    graphql: () => gql(server, "{ users { id noSuchField } }", {}, tenant.headers),
  },
];

/** The rule: the status a GraphQL answer must have, read from the answer itself. */
const statusByRule = (body: GraphqlResult, code: ErrorCode) => ("data" in body ? 200 : ERROR_CODES[code]);

describe("GraphQL over HTTP: one rule for the status", () => {
  it.each(CASES)("$refusal: $code, the status the rule gives (ran: $ran); REST answers the code's status", async ({ code, ran, graphql, rest: overRest }) => {
    const answer = await graphql();
    expect(answer.body.errors?.[0]?.extensions?.code, JSON.stringify(answer.body)).toBe(code);
    expect("data" in answer.body, JSON.stringify(answer.body)).toBe(ran);
    expect(answer.status).toBe(statusByRule(answer.body, code));
    if (overRest) {
      const refused = await overRest();
      expect(refused.body.code, JSON.stringify(refused.body)).toBe(code);
      expect(refused.status).toBe(ERROR_CODES[code]);
    }
  });

  it("the exception GraphQL over HTTP makes: under application/json a document that fails validation is 200, without data", async () => {
    const answer = await postGraphql(server, "json", "{ users { id noSuchField } }", { headers: { ...tenant.headers, accept: "application/json" } });
    expect(answer.body.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
    expect("data" in answer.body).toBe(false);
    expect(answer.status).toBe(200);
  });
});
