import { request } from "node:http";
import { serverAudits } from "graphql-http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";

let server: TestServer;
let tenant: Tenant;
beforeAll(async () => {
  server = await startServer();
  tenant = await newTenant(server);
});
afterAll(() => server?.stop());

const GRAPHQL_RESPONSE = "application/graphql-response+json";
const JSON_TYPE = "application/json";

/** The Accept headers real clients send, and the media type GraphQL over HTTP answers each with. */
const CLIENT_FORMS: { client: string; accept: string | undefined; answeredAs: string }[] = [
  { client: "graphql-request 7 and graphql-http's client", accept: "application/graphql-response+json, application/json", answeredAs: GRAPHQL_RESPONSE },
  { client: "Apollo Client 4", accept: "application/graphql-response+json,application/json;q=0.9", answeredAs: GRAPHQL_RESPONSE },
  { client: "urql", accept: "application/graphql-response+json, application/graphql+json, application/json, text/event-stream, multipart/mixed", answeredAs: GRAPHQL_RESPONSE },
  { client: "a browser's fetch (*/*)", accept: "*/*", answeredAs: JSON_TYPE },
  { client: "curl without -H accept (no Accept)", accept: undefined, answeredAs: JSON_TYPE },
  { client: "a q-value list that prefers application/json", accept: "application/graphql-response+json;q=0.5, application/json", answeredAs: JSON_TYPE },
  { client: "Spring, OkHttp and .NET (application/json;charset=UTF-8)", accept: "application/json;charset=UTF-8", answeredAs: JSON_TYPE },
  { client: "a list with charset=utf-8 on each type", accept: "application/graphql-response+json; charset=utf-8, application/json; charset=utf-8", answeredAs: GRAPHQL_RESPONSE },
];

/** fetch, with the tenant's key, and the audit's Accept replaced by the client's form wherever it asks for what that form is answered as. */
function fetchAs(form: (typeof CLIENT_FORMS)[number]) {
  return (input: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    headers.set("x-api-key", tenant.apiKey);
    const asked = headers.get("accept") ?? JSON_TYPE;
    if (asked === form.answeredAs || (asked === "*/*" && form.answeredAs === JSON_TYPE)) {
      if (form.accept === undefined) headers.delete("accept");
      else headers.set("accept", form.accept);
    }
    return fetch(input, { ...init, headers });
  };
}

describe("GraphQL over HTTP, graphql-http's server audits", () => {
  it.each(CLIENT_FORMS)("pass 100% with the Accept of $client", async (form) => {
    const audits = serverAudits({ url: () => `${server.url}/graphql`, fetchFn: fetchAs(form) });
    const results = await Promise.all(audits.map((audit) => audit.fn()));
    const failed = results.filter((result) => result.status !== "ok").map((result) => `${result.id} ${result.name}: ${"reason" in result ? result.reason : ""}`);
    expect(failed).toEqual([]);
    expect(results.length).toBeGreaterThan(30);
  });
});

type Answer = { status: number; contentType: string | null; body: unknown };

async function post(accept: string | undefined, body: unknown, headers: Record<string, string>): Promise<Answer> {
  const res = await fetch(`${server.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(accept === undefined ? {} : { accept }), ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, contentType: res.headers.get("content-type"), body: text ? withoutRequestIds(JSON.parse(text)) : undefined };
}

const withoutRequestIds = (body: unknown) => JSON.parse(JSON.stringify(body, (key, value) => (key === "requestId" ? undefined : value)));

describe("an Accept list is answered like the one media type it negotiates to", () => {
  const requests: [string, (userId: string) => { body: unknown; headers: Record<string, string> }][] = [
    ["a lookup", (userId) => ({ body: { query: "query ($id: ID!) { user(id: $id) { id email } }", variables: { id: userId } }, headers: tenant.headers })],
    ["a new document each time", () => ({ body: { query: `{ me { id } } # ${crypto.randomUUID()}` }, headers: tenant.headers })],
    ["a document that does not parse", () => ({ body: { query: "{ me { id " }, headers: tenant.headers })],
    ["a document that fails validation", () => ({ body: { query: "{ me { nothing } }" }, headers: tenant.headers })],
    ["a variable of the wrong type", () => ({ body: { query: "query ($id: ID!) { user(id: $id) { id } }", variables: { id: 5.5 } }, headers: tenant.headers })],
    ["no credential", (userId) => ({ body: { query: "query ($id: ID!) { user(id: $id) { id } }", variables: { id: userId } }, headers: {} })],
  ];

  for (const form of CLIENT_FORMS) {
    it.each(requests)(`${form.client}: %s`, async (_name, make) => {
      const created = await post(JSON_TYPE, { query: `mutation { createUser(input: { email: "${crypto.randomUUID()}@example.com", firstName: "Ada", lastName: "L", phoneNumber: "+14155552671", dob: "1990-01-01" }) { id } }` }, tenant.headers);
      const userId = (created.body as { data: { createUser: { id: string } } }).data.createUser.id;
      const { body, headers } = make(userId);
      const asList = await post(form.accept, body, headers);
      const plain = await post(form.answeredAs, body, headers);
      expect(asList.contentType).toContain(form.answeredAs);
      expect(asList).toEqual(plain);
    });
  }

  it.each([["image/png"], ["application/json; charset=iso-8859-1"]])("answers 406, naming what it can answer, to Accept: %s", async (accept) => {
    const res = await fetch(`${server.url}/graphql`, { method: "POST", headers: { ...tenant.headers, "content-type": JSON_TYPE, accept }, body: JSON.stringify({ query: "{ me { id } }" }) });
    expect(res.status).toBe(406);
    expect(res.headers.get("accept")).toContain(GRAPHQL_RESPONSE);
  });

  it("answers a POST with no body with 400 whatever the Accept (graphql-http audit A5BF)", async () => {
    for (const accept of [JSON_TYPE, GRAPHQL_RESPONSE, "*/*"]) {
      const res = await fetch(`${server.url}/graphql`, { method: "POST", headers: { ...tenant.headers, "content-type": JSON_TYPE, accept } });
      expect(res.status, accept).toBe(400);
    }
  });
});

describe("requests refused before they have an operation", () => {
  type Refused = { method?: string; headers?: Record<string, string>; body?: string; query?: string };
  const send = (init: Refused) =>
    fetch(`${server.url}/graphql${init.query ?? ""}`, { method: init.method ?? "POST", headers: init.headers, body: init.body });

  it.each([
    ["variables that are not an object", { headers: { "content-type": JSON_TYPE }, body: JSON.stringify({ query: "{ me { id } }", variables: [1] }) }, 400],
    ["a content type GraphQL does not take", { headers: { "content-type": "text/plain" }, body: "{ me { id } }" }, 415],
    ["an Accept nothing answers", { headers: { "content-type": JSON_TYPE, accept: "image/png" }, body: JSON.stringify({ query: "{ me { id } }" }) }, 406],
    ["a parameter given twice", { method: "GET", query: `?query=${encodeURIComponent("{ __typename }")}&query=${encodeURIComponent("{ me { id } }")}` }, 400],
  ] as [string, Refused, number][])("answers %s with 401 to a caller without a valid credential, and its own status to one with", async (_name, request, status) => {
    expect((await send(request)).status).toBe(401);
    expect((await send({ ...request, headers: { ...request.headers, ...tenant.headers } })).status).toBe(status);
  });

  it.each([["text/event-stream"], ["text/html"], [JSON_TYPE]])("answers a Host header that does not make a URL with 400 (Accept: %s), never a 500", async (accept) => {
    const { port } = new URL(server.url);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({ host: "127.0.0.1", port, path: `/graphql?query=${encodeURIComponent("{ __typename }")}`, headers: { host: "a b", accept, ...tenant.headers } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.end();
    });
    expect(status).toBe(400);
  });
});

describe("a subscription sent with JSON preferred (urql's Accept)", () => {
  it("is answered as a stream, and admitted once (one unit of the client's budget)", async () => {
    const limited = await startServer({ env: { RATE_LIMIT_PER_MINUTE: "2" } });
    try {
      const own = await newTenant(limited);
      const controller = new AbortController();
      const stream = await fetch(`${limited.url}/graphql`, {
        method: "POST",
        headers: { ...own.headers, "content-type": JSON_TYPE, accept: CLIENT_FORMS[2].accept! },
        body: JSON.stringify({ query: "subscription { events { id } }" }),
        signal: controller.signal,
      });
      expect(stream.status).toBe(200);
      expect(stream.headers.get("content-type")).toContain("text/event-stream");
      controller.abort();
      const query = () => fetch(`${limited.url}/graphql`, { method: "POST", headers: { ...own.headers, "content-type": JSON_TYPE }, body: JSON.stringify({ query: "{ me { id } }" }) });
      expect((await query()).status).toBe(200);
      expect((await query()).status).toBe(429);
    } finally {
      await limited.stop();
    }
  });
});
