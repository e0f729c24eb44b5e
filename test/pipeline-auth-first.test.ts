import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newTenant, type TestServer } from "./support/server.js";
import { rest, type HttpResult } from "./support/http.js";
import { startServerWithMailbox, type Mailbox } from "./support/mailbox.js";
import { codesOf, expectRestError, connectWs, craftSessionToken, postGraphql, secondsFromNow, type GraphqlResult } from "./support/pipeline.js";

let server: TestServer;
let mailbox: Mailbox;
beforeAll(async () => {
  ({ server, mailbox } = await startServerWithMailbox());
});
afterAll(() => server?.stop());

/** Every kind of missing or dead credential: each is refused before anything about the request is looked at. */
const BAD_CREDENTIALS: { credential: string; headers: () => Promise<Record<string, string>> }[] = [
  { credential: "none", headers: async () => ({}) },
  { credential: "a garbage API key", headers: async () => ({ "x-api-key": "garbage" }) },
  {
    credential: "a revoked API key",
    async headers() {
      const tenant = await newTenant(server);
      const created = await rest(server, "POST", "/v1/api-keys", { headers: tenant.headers });
      expect((await rest(server, "DELETE", `/v1/api-keys/${created.body.id}`, { headers: tenant.headers })).status).toBe(200);
      return { "x-api-key": created.body.key };
    },
  },
  {
    credential: "a logged-out JWT",
    async headers() {
      const tenant = await newTenant(server);
      const headers = { "x-client-auth": await craftSessionToken(server, tenant.clientId) };
      expect((await rest(server, "POST", "/v1/client-auth/logout", { headers })).status).toBe(200);
      return headers;
    },
  },
  {
    credential: "an expired JWT",
    async headers() {
      const tenant = await newTenant(server);
      return { "x-client-auth": await craftSessionToken(server, tenant.clientId, { exp: secondsFromNow(-10) }) };
    },
  },
];

/** Requests that are wrong in some other way too: with a bad credential, that other way must not be what the caller hears. */
const INVALID_REQUESTS: { request: string; send: (headers: Record<string, string>) => Promise<HttpResult> }[] = [
  { request: "REST POST /v1/user with a partial body", send: (headers) => rest(server, "POST", "/v1/user", { headers, body: { firstName: "Ada" } }) },
  { request: "GraphQL JSON with an unknown field", send: (headers) => postGraphql(server, "json", "{ users { id noSuchField } }", { headers }) },
  {
    request: "GraphQL JSON createUser without its variables",
    send: (headers) => postGraphql(server, "json", "mutation ($input: CreateUserInput!) { createUser(input: $input) { id } }", { headers }),
  },
  { request: "application/graphql with an unknown field", send: (headers) => postGraphql(server, "graphql", "{ users { id noSuchField } }", { headers }) },
  { request: "application/graphql createUser without its input", send: (headers) => postGraphql(server, "graphql", "mutation { createUser { id } }", { headers }) },
  {
    request: "form-encoded createUser without its variables",
    send: (headers) => postGraphql(server, "form", "mutation ($input: CreateUserInput!) { createUser(input: $input) { id } }", { headers }),
  },
  { request: "GraphQL JSON that does not parse", send: (headers) => postGraphql(server, "json", "{ users { id ", { headers }) },
];

describe("authentication comes before any validation", () => {
  const cases = BAD_CREDENTIALS.flatMap((credential) => INVALID_REQUESTS.map((request) => ({ ...credential, ...request })));
  it.each(cases)("$request with $credential credential → 401", async ({ headers, send }) => {
    const res = await send(await headers());
    expect(res.status, JSON.stringify(res.body)).toBe(401);
    if (res.body.errors) {
      expect(codesOf(res.body)).toEqual(["UNAUTHENTICATED"]);
      expect(res.body.data).toBeUndefined();
    } else expectRestError(res.body);
  });

  it.each(INVALID_REQUESTS)("with a valid credential, $request is a 400 BAD_USER_INPUT (the spec's code)", async ({ send }) => {
    const tenant = await newTenant(server);
    const res = await send(tenant.headers);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    if (res.body.errors) expect(codesOf(res.body), JSON.stringify(res.body)).toEqual(["BAD_USER_INPUT"]);
    else expectRestError(res.body);
  });

  it("over graphql-ws, a document that fails validation is BAD_USER_INPUT too", async () => {
    const tenant = await newTenant(server);
    const connection = connectWs(server, { "x-api-key": tenant.apiKey });
    try {
      const [result] = await connection.run({ query: "{ users { id noSuchField } }" });
      expect(codesOf(result), JSON.stringify(result)).toEqual(["BAD_USER_INPUT"]);
    } finally {
      await connection.dispose();
    }
  });
});

describe("public operations need no credential", () => {
  const ok = (result: HttpResult<GraphqlResult>) => {
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    expect(result.body.errors, JSON.stringify(result.body)).toBeUndefined();
    return result.body.data;
  };

  it.each([
    { operation: "{ __typename }", query: "{ __typename }", expected: { __typename: "Query" } },
    { operation: "introspection (__schema)", query: "{ __schema { queryType { name } } }", expected: { __schema: { queryType: { name: "Query" } } } },
    { operation: "introspection (__type)", query: `{ __type(name: "User") { name } }`, expected: { __type: { name: "User" } } },
  ])("$operation", async ({ query, expected }) => {
    expect(ok(await postGraphql(server, "json", query))).toEqual(expected);
    expect(ok(await postGraphql(server, "graphql", query))).toEqual(expected);
  });

  it.each([
    { surface: "REST /v1/client-auth/otp", send: (headers: Record<string, string>) => rest(server, "POST", "/v1/client-auth/otp", { headers, body: { email: `keyed-${crypto.randomUUID()}@example.com` } }) },
    { surface: "GraphQL requestOtp", send: (headers: Record<string, string>) => postGraphql(server, "json", `mutation { requestOtp(email: "keyed-${crypto.randomUUID()}@example.com") { message } }`, { headers }) },
  ])("an OTP request over $surface sent with an Idempotency-Key is not asked for a credential", async ({ send }) => {
    const res = await send({ "idempotency-key": `otp-${crypto.randomUUID()}` });
    expect(res.status, JSON.stringify(res.body)).not.toBe(401);
    expect(res.status, JSON.stringify(res.body)).toBeLessThan(500);
  });

  it("requestOtp then verifyOtp over GraphQL, and over REST", async () => {
    const overGraphql = `gql-${crypto.randomUUID()}@example.com`;
    ok(await postGraphql(server, "json", `mutation { requestOtp(email: "${overGraphql}", name: "Ada") { message } }`));
    const otp = await mailbox.codeFor(overGraphql);
    const verified = ok(await postGraphql(server, "graphql", `mutation { verifyOtp(email: "${overGraphql}", otp: "${otp}") { token } }`));
    expect(verified.verifyOtp.token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);

    const overRest = `rest-${crypto.randomUUID()}@example.com`;
    expect((await rest(server, "POST", "/v1/client-auth/otp", { body: { email: overRest } })).status).toBe(200);
    const restVerified = await rest(server, "POST", "/v1/client-auth/verify", { body: { email: overRest, otp: await mailbox.codeFor(overRest) } });
    expect(restVerified.status).toBe(200);
    expect(restVerified.body.token).toBeTruthy();
  });
});
