import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newTenant, startServer, type TestServer } from "./support/server.js";
import { gql } from "./support/http.js";
import { startServerWithMailbox, type Mailbox } from "./support/mailbox.js";

let server: TestServer;
let mailbox: Mailbox;
beforeAll(async () => {
  ({ server, mailbox } = await startServerWithMailbox());
  mailbox.refuseMail(); // requestOtp then fails unexpectedly: the masking case
});
afterAll(() => server?.stop());

const GRAPHQL_RESPONSE = "application/graphql-response+json";

type Answer = { status: number; contentType: string; body: any; headers: Headers };

async function post(body: unknown, headers: Record<string, string> = {}, accept = GRAPHQL_RESPONSE): Promise<Answer> {
  const res = await fetch(`${server.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", accept, ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, contentType: res.headers.get("content-type") ?? "", body: await res.json(), headers: res.headers };
}

async function get(params: Record<string, string>, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${server.url}/graphql?${new URLSearchParams(params)}`, { headers: { accept: GRAPHQL_RESPONSE, ...headers } });
  return { status: res.status, contentType: res.headers.get("content-type") ?? "", body: await res.json(), headers: res.headers };
}

/** A selection `depth` levels deep through introspection types (the only recursion every schema has). */
function nestedQuery(depth: number): string {
  let selection = "name";
  for (let level = 0; level < depth - 4; level++) selection = `ofType { ${selection} }`;
  return `{ __type(name: "Query") { fields { type { ${selection} } } } }`;
}

describe("GraphQL over HTTP", () => {
  it("answers a POST with application/graphql-response+json", async () => {
    const tenant = await newTenant(server);
    const res = await post({ query: "{ me { id } }" }, tenant.headers);
    expect(res.status).toBe(200);
    expect(res.contentType).toMatch(/^application\/graphql-response\+json/);
    expect(res.body).toEqual({ data: { me: { id: tenant.clientId } } });
  });

  it("answers browsers on any origin (CORS): the origin reflected, Vary: Origin on every answer, preflights cached 10 minutes; /v1 sends none", async () => {
    const tenant = await newTenant(server);
    const origin = "https://app.example";
    const cross = await post({ query: "{ me { id } }" }, { ...tenant.headers, origin });
    expect(cross.status).toBe(200);
    expect(cross.headers.get("access-control-allow-origin")).toBe(origin);
    expect(cross.headers.get("vary")).toBe("Origin");
    expect(cross.headers.get("access-control-allow-credentials")).toBeNull();
    const sameOrigin = await get({ query: "{ me { id } }" }, tenant.headers);
    expect(sameOrigin.headers.get("access-control-allow-origin")).toBeNull();
    expect(sameOrigin.headers.get("vary")).toBe("Origin");
    const refused = await post({ query: "{ me { id } }" }, { origin });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("access-control-allow-origin")).toBe(origin);

    const preflight = await fetch(`${server.url}/graphql`, {
      method: "OPTIONS",
      headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "content-type, x-api-key" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe(origin);
    expect(preflight.headers.get("access-control-allow-methods")).toBe("GET,HEAD,PUT,PATCH,POST,DELETE");
    expect(preflight.headers.get("access-control-allow-headers")).toBe("content-type, x-api-key");
    expect(preflight.headers.get("access-control-max-age")).toBe("600");
    expect(preflight.headers.get("vary")).toBe("Origin, Access-Control-Request-Headers");

    const rest = await fetch(`${server.url}/v1/user/${tenant.clientId}`, { headers: { ...tenant.headers, origin } });
    expect(rest.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("answers a GET query, with variables in the URL", async () => {
    const tenant = await newTenant(server);
    const res = await get({ query: "query ($page: Int) { me { id } users(page: $page) { id } }", variables: JSON.stringify({ page: 1 }) }, tenant.headers);
    expect(res.status).toBe(200);
    expect(res.contentType).toMatch(/^application\/graphql-response\+json/);
    expect(res.body.data).toEqual({ me: { id: tenant.clientId }, users: [] });
  });

  it("refuses a mutation over GET with 405 and Allow: POST", async () => {
    const tenant = await newTenant(server);
    const res = await get({ query: "mutation { createApiKey { id } }" }, tenant.headers);
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toContain("POST");
    expect(await server.app.db.prisma.apiKey.count({ where: { clientId: tenant.clientId } })).toBe(1);
  });

  it("answers a document that does not parse with 400 and no data", async () => {
    const tenant = await newTenant(server);
    const res = await post({ query: "{ me { id " }, tenant.headers);
    expect(res.status).toBe(400);
    expect(res.contentType).toMatch(/^application\/graphql-response\+json/);
    expect(res.body.data).toBeUndefined();
    expect(res.body.errors).toHaveLength(1);
  });

  it("answers a document that fails validation with 400 and no data", async () => {
    const tenant = await newTenant(server);
    const res = await post({ query: "{ me { noSuchField } }" }, tenant.headers);
    expect(res.status).toBe(400);
    expect(res.body.data).toBeUndefined();
    expect(res.body.errors[0].message).toContain("noSuchField");
  });

  it("answers variables of the wrong type with 400", async () => {
    const tenant = await newTenant(server);
    const res = await post({ query: "query ($page: Int) { users(page: $page) { id } }", variables: { page: "one" } }, tenant.headers);
    expect(res.status).toBe(400);
    expect(res.body.data).toBeUndefined();
  });

  it("quotes the request's id in yoga's own refusals: a document that does not parse, a mutation over GET", async () => {
    const tenant = await newTenant(server);
    const unparsable = await post({ query: "{ me { id " }, tenant.headers);
    const overGet = await get({ query: "mutation { createApiKey { id } }" }, tenant.headers);
    for (const res of [unparsable, overGet]) {
      expect(res.body.errors[0].extensions.requestId).toBe(res.headers.get("x-request-id"));
    }
  });

  it("quotes each request's own id in a validation error, also for a document that failed before", async () => {
    const tenant = await newTenant(server);
    const invalid = { query: `{ me { noSuchField } } # ${crypto.randomUUID()}` };
    for (const res of [await post(invalid, tenant.headers), await post(invalid, tenant.headers)]) {
      expect(res.status).toBe(400);
      expect(res.body.errors[0].extensions.requestId).toBe(res.headers.get("x-request-id"));
    }
  });

  it("answers a request without a query with 400, or 401 without a valid credential (who asks comes first)", async () => {
    const tenant = await newTenant(server);
    expect((await post({ variables: {} }, tenant.headers)).status).toBe(400);
    expect((await post({ variables: {} })).status).toBe(401);
  });

  it("keeps the legacy 200 for request errors when the client accepts only application/json", async () => {
    const tenant = await newTenant(server);
    const res = await post({ query: "{ me { id " }, tenant.headers, "application/json");
    expect(res.status).toBe(200);
    expect(res.contentType).toMatch(/^application\/json/);
    expect(res.body.errors).toHaveLength(1);
  });

  it("answers a field error with 200, the field null and a typed code", async () => {
    const tenant = await newTenant(server);
    const res = await post({ query: `{ user(id: "${crypto.randomUUID()}") { id } }` }, tenant.headers);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ user: null });
    expect(res.body.errors[0].extensions.code).toBe("NOT_FOUND");
  });
});

describe("a document seen before (answered from yoga's parse and validation caches)", () => {
  const comparable = (answer: Answer) => ({
    status: answer.status,
    contentType: answer.contentType,
    body: JSON.stringify(answer.body).replaceAll(answer.headers.get("x-request-id")!, "<request id>"),
  });
  // Each test's documents end in a comment of their own: new text, so the first request is yoga's.
  const USER = "query ($id: ID!) { user(id: $id) { id firstName } }";
  const cases: [string, (t: { headers: Record<string, string>; userId: string }, tag: string) => [unknown, Record<string, string>]][] = [
    ["data", (t, tag) => [{ query: USER + tag, variables: { id: t.userId } }, t.headers]],
    ["a field error", (t, tag) => [{ query: USER + tag, variables: { id: crypto.randomUUID() } }, t.headers]],
    ["a variable of the wrong type", (t, tag) => [{ query: USER + tag, variables: { id: { not: "an id" } } }, t.headers]],
    ["a missing variable", (t, tag) => [{ query: USER + tag }, t.headers]],
    ["no credential", (t, tag) => [{ query: USER + tag, variables: { id: t.userId } }, {}]],
    ["a chosen operation", (t, tag) => [{ query: `query One { __typename } query Other { me { id } }${tag}`, operationName: "Other" }, t.headers]],
  ];
  for (const accept of [GRAPHQL_RESPONSE, "application/json", "*/*"]) {
    it.each(cases)(`answers ${accept} with %s exactly as the first time`, async (_name, request) => {
      const tenant = await newTenant(server);
      const user = await post({ query: `mutation { createUser(input: { email: "${crypto.randomUUID()}@example.com", firstName: "Ada", lastName: "L", phoneNumber: "+14155552671", dob: "1990-01-01" }) { id } }` }, tenant.headers);
      const [body, headers] = request({ headers: tenant.headers, userId: user.body.data.createUser.id }, ` # ${crypto.randomUUID()}`);
      const first = await post(body, headers, accept);
      const again = await post(body, headers, accept);
      expect(comparable(again)).toEqual(comparable(first));
    });
  }
});

describe("bodies that are not what GraphQL over HTTP takes", () => {
  it.each([
    ["a +json content type other than application/json", "application/evil+json", JSON.stringify({ query: "{ me { id } }" }), 415, "UNSUPPORTED_MEDIA_TYPE"],
    ["text/plain", "text/plain", "{ me { id } }", 415, "UNSUPPORTED_MEDIA_TYPE"],
    ["JSON sent as a form (curl -d)", "application/x-www-form-urlencoded", JSON.stringify({ query: "{ me { id } }" }), 400, "BAD_USER_INPUT"],
    ["a batch (an array)", "application/json", JSON.stringify([{ query: "{ me { id } }" }]), 400, "BAD_USER_INPUT"],
  ])("answers %s with a status that names what to send", async (_name, contentType, body, status, code) => {
    const tenant = await newTenant(server);
    const res = await fetch(`${server.url}/graphql`, { method: "POST", headers: { ...tenant.headers, "content-type": contentType, accept: GRAPHQL_RESPONSE }, body });
    expect(res.status).toBe(status);
    const answer = await res.json();
    expect(answer.errors[0].extensions.code).toBe(code);
    if (status === 415 || contentType.includes("form")) expect(answer.errors[0].message).toContain("application/json");
  });

  it.each([["variables"], ["extensions"]])("answers a GET whose %s is not JSON with 400, and counts it against the caller's budget", async (param) => {
    const limited = await startServer({ env: { RATE_LIMIT_PER_MINUTE: "2" } });
    try {
      const url = `${limited.url}/graphql?query=${encodeURIComponent("{ me { id } }")}&${param}=%7B`;
      const { headers } = await newTenant(limited);
      const statuses = [];
      for (let i = 0; i < 12; i++) statuses.push((await fetch(url, { headers: { accept: GRAPHQL_RESPONSE, ...headers } })).status);
      expect(statuses[0]).toBe(400);
      expect(statuses).toContain(429);
      expect(statuses.filter((status) => status >= 500)).toEqual([]);
      expect(limited.logs.join("")).not.toMatch(/unexpected error|SyntaxError/);
    } finally {
      await limited.stop();
    }
  });
});

describe("error masking", () => {
  it("masks an unexpected error as INTERNAL without its message or stack", async () => {
    const res = await post({ query: `mutation { requestOtp(email: "masked@example.com") { message } }` });
    expect(res.body.errors).toHaveLength(1);
    const [error] = res.body.errors;
    expect(error.message).toBe("Unexpected error");
    expect(error.extensions).toEqual({ code: "INTERNAL", requestId: res.headers.get("x-request-id") });
    expect(JSON.stringify(res.body)).not.toMatch(/mailbox unavailable|stack|smtp|\.ts:\d+/i);
    expect(server.logs.join("\n")).toContain("mailbox unavailable");
  });

  it("keeps the message and code of an expected error", async () => {
    const tenant = await newTenant(server);
    const res = await post({ query: `{ user(id: "${crypto.randomUUID()}") { id } }` }, tenant.headers);
    expect(res.body.errors[0]).toMatchObject({ message: "User not found", extensions: { code: "NOT_FOUND" } });
  });
});

describe("query limits", () => {
  it("runs a query at the depth limit (8)", async () => {
    const tenant = await newTenant(server);
    const res = await post({ query: nestedQuery(8) }, tenant.headers);
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
  });

  it("lets introspection-only documents past the depth limit, so code generators work", async () => {
    const tenant = await newTenant(server);
    const res = await post({ query: nestedQuery(12) }, tenant.headers);
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
  });

  it("refuses a query deeper than the limit with 400, before running it", async () => {
    const tenant = await newTenant(server);
    const res = await post({ query: nestedQuery(9).replace(/^\{/, "{ me { id }") }, tenant.headers);
    expect(res.status).toBe(400);
    expect(res.contentType).toMatch(/^application\/graphql-response\+json/);
    expect(res.body.data).toBeUndefined();
    expect(res.body.errors[0].message).toMatch(/depth/i);
  });

  it("refuses a query with too many aliases with 400", async () => {
    const tenant = await newTenant(server);
    const aliases = Array.from({ length: 21 }, (_, i) => `a${i}: me { id }`).join(" ");
    const res = await post({ query: `{ ${aliases} }` }, tenant.headers);
    expect(res.status).toBe(400);
    expect(res.body.errors[0].message).toMatch(/alias/i);
  });

  it("refuses an oversized document with 400", async () => {
    const tenant = await newTenant(server);
    const fields = Array.from({ length: 1100 }, () => "id").join(" ");
    const res = await post({ query: `{ me { ${fields} } }` }, tenant.headers);
    expect(res.status).toBe(400);
    expect(res.body.data).toBeUndefined();
  });
});

describe("introspection switched off", () => {
  it("refuses introspection and field suggestions when GRAPHQL_INTROSPECTION is off", async () => {
    const closed = await startServer({ env: { GRAPHQL_INTROSPECTION: "off" } });
    try {
      const tenant = await newTenant(closed);
      const introspection = await gql(closed, "{ __schema { queryType { name } } }", {}, tenant.headers);
      expect(introspection.status).toBe(400);
      expect(introspection.body.data).toBeUndefined();
      expect((await fetch(`${closed.url}/graphql/schema.graphql`)).status).toBe(404);
      const typo = await gql(closed, "{ mee { id } }", {}, tenant.headers);
      expect(JSON.stringify(typo.body)).not.toMatch(/Did you mean/);
      expect((await gql(server, "{ __schema { queryType { name } } }")).body.data).toEqual({ __schema: { queryType: { name: "Query" } } });
    } finally {
      await closed.stop();
    }
  });
});
