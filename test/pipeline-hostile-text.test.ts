import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { maskError } from "../src/graphql/errors.js";
import { createLogger } from "../src/logger.js";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";
import { rest, userInput, type HttpResult } from "./support/http.js";
import { balanceOf, fundedUser, NGN_ACCOUNT } from "./support/withdrawals.js";
import { codesOf, connectWs, expectRestError, postGraphql } from "./support/pipeline.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

/** Text no input may carry: control characters, half a surrogate pair, and more than 10,000 characters. */
const HOSTILE = [
  { text: "a NUL", value: "Ada\u0000" },
  { text: "a BEL control character", value: "Ada\u0007" },
  { text: "an escape control character", value: "Ada\u001b[31m" },
  { text: "a lone high surrogate", value: "Ada\uD800" },
  { text: "a lone low surrogate", value: "\uDC00Ada" },
  { text: "10,001 characters", value: "A".repeat(10_001) },
];

/** A refusal on either surface: 400, REST's `{error}` or GraphQL's BAD_USER_INPUT; never a 5xx. */
function expectBadInput(res: HttpResult) {
  expect(res.status, JSON.stringify(res.body)?.slice(0, 500)).toBe(400);
  if (res.body.errors) expect(codesOf(res.body)).toEqual(["BAD_USER_INPUT"]);
  else expectRestError(res.body);
}

const CREATE_USER = "mutation ($input: CreateUserInput!) { createUser(input: $input) { id } }";
const userCount = (tenant: Tenant) => server.app.db.prisma.user.count({ where: { clientId: tenant.clientId } });

describe.each(HOSTILE)("a user name with $text", ({ value }) => {
  it.each([
    { surface: "REST POST /v1/user", send: (t: Tenant) => rest(server, "POST", "/v1/user", { headers: t.headers, body: userInput({ firstName: value }) }) },
    { surface: "GraphQL createUser (variables)", send: (t: Tenant) => postGraphql(server, "json", CREATE_USER, { headers: t.headers, variables: { input: userInput({ lastName: value }) } }) },
    {
      surface: "GraphQL createUser (form-encoded variables)",
      send: (t: Tenant) => postGraphql(server, "form", CREATE_USER, { headers: t.headers, variables: { input: userInput({ firstName: value }) } }),
    },
  ])("is refused 400 over $surface and nothing is stored", async ({ send }) => {
    const tenant = await newTenant(server);
    expectBadInput(await send(tenant));
    expect(await userCount(tenant)).toBe(0);
  });
});

describe("other free text", () => {
  it("a NUL written as a GraphQL string escape, over application/graphql, is refused 400", async () => {
    const tenant = await newTenant(server);
    const fields = Object.entries(userInput({ firstName: "Ada\u0000" })).map(([name, v]) => `${name}: ${JSON.stringify(v)}`);
    expectBadInput(await postGraphql(server, "graphql", `mutation { createUser(input: { ${fields.join(", ")} }) { id } }`, { headers: tenant.headers }));
    expect(await userCount(tenant)).toBe(0);
  });

  it.each([
    { surface: "REST /v1/client-auth/otp", send: (name: string) => rest(server, "POST", "/v1/client-auth/otp", { body: { email: `nul-${crypto.randomUUID()}@example.com`, name } }) },
    {
      surface: "GraphQL requestOtp",
      send: (name: string) =>
        postGraphql(server, "json", "mutation ($email: String!, $name: String) { requestOtp(email: $email, name: $name) { message } }", {
          variables: { email: `nul-${crypto.randomUUID()}@example.com`, name },
        }),
    },
  ])("an OTP request's name with a NUL is refused 400 over $surface", async ({ send }) => {
    expectBadInput(await send("Ada\u0000"));
  });

  it.each([
    { path: "GET /v1/withdrawals/{reference}", send: (t: Tenant) => rest(server, "GET", "/v1/withdrawals/wd_%00abc", { headers: t.headers }) },
    { path: "POST /v1/sandbox/withdrawals/{reference}/complete", send: (t: Tenant) => rest(server, "POST", "/v1/sandbox/withdrawals/wd_%00abc/complete", { headers: t.headers }) },
    { path: "POST /v1/sandbox/withdrawals/{reference}/fail", send: (t: Tenant) => rest(server, "POST", "/v1/sandbox/withdrawals/%07/fail", { headers: t.headers, body: {} }) },
    {
      path: "GraphQL withdrawal(reference)",
      send: (t: Tenant) => postGraphql(server, "json", "query ($r: ID!) { withdrawal(reference: $r) { status } }", { headers: t.headers, variables: { r: "wd_\u0000" } }),
    },
  ])("a withdrawal reference with a control character in $path is refused 400", async ({ send }) => {
    expectBadInput(await send(await newTenant(server)));
  });

  it.each([
    { field: "narration", overrides: { narration: "Rent\u0000" } },
    { field: "bankName", overrides: { bankName: "GT\u0000Bank" } },
    { field: "accountName", overrides: { accountName: "Ada\uD800" } },
  ])("an NGN withdrawal whose $field is hostile is refused 400 and moves no money", async ({ overrides }) => {
    const tenant = await newTenant(server);
    const userId = await fundedUser(server, tenant, "NGN", "100000");
    const res = await rest(server, "POST", "/v1/withdrawals/ngn", { headers: tenant.headers, body: { userId, amount: 5000, ...NGN_ACCOUNT, narration: "Rent", ...overrides } });
    expectBadInput(res);
    expect(await balanceOf(server, tenant, userId, "NGN")).toBe("100000");
  });

  it("failing a real withdrawal with a NUL in its reason is refused 400, and the withdrawal stays as it was", async () => {
    const tenant = await newTenant(server);
    const userId = await fundedUser(server, tenant, "NGN", "100000");
    const made = await rest(server, "POST", "/v1/withdrawals/ngn", { headers: tenant.headers, body: { userId, amount: 5000, ...NGN_ACCOUNT } });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const reference = made.body.reference as string;
    expectBadInput(await rest(server, "POST", `/v1/sandbox/withdrawals/${reference}/fail`, { headers: tenant.headers, body: { reason: "bank said\u0000no" } }));
    expectBadInput(
      await postGraphql(server, "json", "mutation ($ref: ID!, $reason: String) { failWithdrawal(reference: $ref, reason: $reason) { status } }", {
        headers: tenant.headers,
        variables: { ref: reference, reason: "\u0000" },
      }),
    );
    const after = await rest(server, "GET", `/v1/withdrawals/${reference}`, { headers: tenant.headers });
    expect(after.body.status).toBe("PENDING");
    expect(await balanceOf(server, tenant, userId, "NGN")).toBe("95000");
  });

  it.each(["/v1/user/%", "/v1/user/%E0%A4%A", "/v1/withdrawals/%zz"])("a malformed percent-encoding in the path %s is a 400 {error}", async (path) => {
    const tenant = await newTenant(server);
    const res = await rest(server, "GET", path, { headers: tenant.headers });
    expectBadInput(res);
  });
});

describe("the database backstop", () => {
  it("a NUL that reaches PostgreSQL is a real database error, mapped to BAD_USER_INPUT (not INTERNAL)", async () => {
    const tenant = await newTenant(server);
    const error = await server.app.db.prisma.user
      .create({ data: { clientId: tenant.clientId, email: `nul-${crypto.randomUUID()}@example.com`, firstName: "Ada\u0000", lastName: "L", phoneNumber: "+14155552671", dob: new Date("1990-05-17") } })
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(error, "the database accepted a NUL").toBeDefined();
    const logged: string[] = [];
    const logger = createLogger("info", { write: (line: string) => logged.push(line) } as unknown as NodeJS.WritableStream);
    const masked = maskError(error, logger);
    expect(masked.extensions.code).toBe("BAD_USER_INPUT");
    expect(logged.join("")).not.toMatch(/unexpected error/);
  });
});

describe("deeply nested variables", () => {
  const nested = (depth: number): unknown => {
    let value: unknown = "leaf";
    for (let level = 0; level < depth; level++) value = [value];
    return value;
  };

  it("are refused 400 past 32 levels, on every transport, without running the operation", async () => {
    const tenant = await newTenant(server);
    const query = "mutation ($input: CreateUserInput!) { createUser(input: $input) { id } }";
    const variables = { input: userInput(), padding: nested(100) };
    const viaHttp = await postGraphql(server, "json", query, { headers: tenant.headers, variables });
    expect(viaHttp.status).toBe(400);
    expect(codesOf(viaHttp.body)).toEqual(["BAD_USER_INPUT"]);
    const ws = connectWs(server, tenant.headers);
    try {
      const [result] = await ws.run({ query, variables });
      expect(codesOf(result)).toEqual(["BAD_USER_INPUT"]);
    } finally {
      await ws.dispose();
    }
    expect(await server.app.db.prisma.user.count({ where: { clientId: tenant.clientId } })).toBe(0);
  });

  it("far deeper than a stack could walk (40,000 levels) are a 4xx, never a 500", async () => {
    const tenant = await newTenant(server);
    const deep = `${"[".repeat(40_000)}"x"${"]".repeat(40_000)}`;
    const res = await fetch(`${server.url}/graphql`, {
      method: "POST",
      headers: { ...tenant.headers, "content-type": "application/json", accept: "application/graphql-response+json" },
      body: `{"query":"{ __typename }","variables":{"deep":${deep}}}`,
    });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
  });
});

describe("errors raised inside a running stream", () => {
  it("are masked as INTERNAL when their cause is not GraphQL's own (a database failure's SQL never reaches the caller)", async () => {
    const { GraphQLError } = await import("graphql");
    const lines: string[] = [];
    const logger = createLogger("error", { write: (line: string) => void lines.push(line) } as unknown as NodeJS.WritableStream);
    const fromStream = new GraphQLError("Invalid `prisma.$queryRaw()` invocation: SELECT … FROM events", { originalError: new Error("db failure") });
    const masked = maskError(fromStream, logger);
    expect(masked.extensions.code).toBe("INTERNAL");
    expect(masked.message).not.toMatch(/prisma|SELECT/);
    const requestError = maskError(new GraphQLError('Variable "$id" of required type "ID!" was not provided.'), logger);
    expect(requestError.extensions.code).toBe("BAD_USER_INPUT");
  });
});
