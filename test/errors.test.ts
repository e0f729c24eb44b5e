import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newTenant, type TestServer } from "./support/server.js";
import { rest, userInput, type HttpResult, contractKeys } from "./support/http.js";
import { startServerWithMailbox, type Mailbox } from "./support/mailbox.js";
import { subscribeWs } from "./support/subscriptions.js";

let server: TestServer;
let mailbox: Mailbox;
beforeAll(async () => {
  // A mail server that refuses every mail: the way to make an unexpected error happen on demand.
  ({ server, mailbox } = await startServerWithMailbox());
  mailbox.refuseMail();
});
afterAll(() => server?.stop());

function expectJsonError(res: HttpResult, status: number) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  expect(contractKeys(res.body)).toEqual(["error"]);
  expect(typeof res.body.error).toBe("string");
  expect(res.body.code).toMatch(/^[A-Z_]+$/);
  expect(res.body.requestId).toBe(res.headers.get("x-request-id"));
  expect(res.body.error).not.toMatch(/\n\s+at |node_modules|\.ts:\d+/);
}

describe("malformed requests", () => {
  it.each([["/v1/user"], ["/graphql"]])("answers malformed JSON on %s with 400 {error}", async (path) => {
    const tenant = await newTenant(server);
    const res = await rest(server, "POST", path, { headers: tenant.headers, rawBody: '{"email": "a@b.co",' });
    expectJsonError(res, 400);
  });

  it("answers a body that does not inflate as its Content-Encoding says with 400 {error}", async () => {
    const res = await fetch(`${server.url}/v1/user`, { method: "POST", headers: { "content-type": "application/json", "content-encoding": "gzip" }, body: "{}" });
    const body = await res.json();
    expectJsonError({ status: res.status, body, headers: res.headers }, 400);
    expect(body.error).toBe("Unreadable request body");
  });

  it("answers a JSON body that is not an object or array with 400 {error}", async () => {
    const tenant = await newTenant(server);
    expectJsonError(await rest(server, "POST", "/v1/user", { headers: tenant.headers, rawBody: '"just a string"' }), 400);
  });

  it("answers a body over 100 kB with 413 {error}, and one under it normally", async () => {
    const tenant = await newTenant(server);
    const big = await rest(server, "POST", "/v1/user", { headers: tenant.headers, body: userInput({ firstName: "x".repeat(101 * 1024) }) });
    expectJsonError(big, 413);
    const under = await rest(server, "POST", "/v1/user", { headers: tenant.headers, body: userInput({ firstName: "x".repeat(90 * 1024) }) });
    expectJsonError(under, 400);
    expect(under.body.error).toContain("firstName");
  });

  it("answers a JSON body in a charset other than UTF-8 with 415, and takes UTF-8 named in any case", async () => {
    const tenant = await newTenant(server);
    const body = JSON.stringify({ email: "someone@example.com" });
    const utf7 = await rest(server, "POST", "/v1/user", { headers: { ...tenant.headers, "content-type": "application/json; charset=utf-7" }, rawBody: body });
    expectJsonError(utf7, 415);
    expect(utf7.body.error).toContain("UTF-8");
    const utf8 = await rest(server, "POST", "/v1/user", { headers: { ...tenant.headers, "content-type": "application/json; charset=UTF-8" }, rawBody: body });
    expectJsonError(utf8, 400);
  });

  it.each([
    ["text/plain", "email=a@b.co"],
    ["a form (curl -d)", '{"email":"a@b.co"}'],
  ])("answers a body sent as %s with 415 naming the header to send", async (type, rawBody) => {
    const tenant = await newTenant(server);
    const contentType = type === "text/plain" ? type : "application/x-www-form-urlencoded";
    const res = await rest(server, "POST", "/v1/user", { headers: { ...tenant.headers, "content-type": contentType }, rawBody });
    expectJsonError(res, 415);
    expect(res.body).toMatchObject({ code: "UNSUPPORTED_MEDIA_TYPE", error: expect.stringContaining("Content-Type: application/json") });
  });
});

describe("unknown routes", () => {
  it.each([
    ["GET", "/v1/nothing-here"],
    ["GET", "/nothing-here"],
    ["DELETE", "/v1/user"],
    ["POST", "/v1/user/12345/extra"],
  ])("%s %s answers 404 {error}", async (method, path) => {
    const tenant = await newTenant(server);
    expectJsonError(await rest(server, method, path, { headers: tenant.headers }), 404);
  });

  it("answers 404 {error} without credentials too", async () => {
    expectJsonError(await rest(server, "GET", "/v1/nothing-here"), 404);
  });
});

describe("unexpected errors", () => {
  it("are answered 500 {error} on REST with no internal message, and logged", async () => {
    const res = await rest(server, "POST", "/v1/client-auth/otp", { body: { email: `x-${crypto.randomUUID()}@example.com` } });
    expectJsonError(res, 500);
    expect(res.body.error).toBe("Internal server error");
    expect(JSON.stringify(res.body)).not.toMatch(/mailbox unavailable|smtp|ECONN|Error:/i);
    expect(server.logs.join("\n")).toContain("mailbox unavailable");
  });
});

describe("request ids", () => {
  it("are on every response, kept when well-formed, made when absent or malformed", async () => {
    const tenant = await newTenant(server);
    const made = await rest(server, "GET", "/v1/user", { headers: tenant.headers });
    expect(made.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const kept = await rest(server, "GET", "/v1/user", { headers: { ...tenant.headers, "x-request-id": "support-case_42.a" } });
    expect(kept.headers.get("x-request-id")).toBe("support-case_42.a");
    const hostile = await rest(server, "GET", "/v1/user", { headers: { ...tenant.headers, "x-request-id": "a b<script>" } });
    expect(hostile.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("stand in REST error bodies with the code, in GraphQL error extensions, and on the request's log lines", async () => {
    const requestId = `case-${crypto.randomUUID()}`;
    const viaRest = await rest(server, "POST", "/v1/client-auth/otp", { headers: { "x-request-id": requestId }, body: { email: `x-${crypto.randomUUID()}@example.com` } });
    expect(viaRest.body).toMatchObject({ error: "Internal server error", code: "INTERNAL", requestId });
    const logged = server.logs.filter((line) => line.includes(requestId)).map((line) => JSON.parse(line));
    expect(logged.map((line) => line.msg)).toEqual(expect.arrayContaining(["unexpected error", "request completed"]));
    expect(logged.find((line) => line.msg === "request completed")).toMatchObject({ res: { status: 500 }, req: { method: "POST", path: "/v1/client-auth/otp" }, route: "/v1/client-auth/otp", durationMs: expect.any(Number) });

    const tenant = await newTenant(server);
    const viaGraphql = await rest(server, "POST", "/graphql", {
      headers: { ...tenant.headers, "x-request-id": requestId },
      body: { query: `{ user(id: "${crypto.randomUUID()}") { id } }` },
    });
    expect(viaGraphql.body.errors[0].extensions).toEqual({ code: "NOT_FOUND", requestId });
  });

  it("stand in the errors of websocket operations, one id per operation, also on an unexpected error's log line", async () => {
    const tenant = await newTenant(server);
    const lookups = [0, 1].map(() => subscribeWs(server.url, tenant.headers, `{ user(id: "${crypto.randomUUID()}") { id } }`));
    const ids = await Promise.all(lookups.map(async (lookup) => (await lookup.take()).errors?.[0].extensions as { code?: string; requestId?: string }));
    lookups.forEach((lookup) => lookup.close());
    for (const extensions of ids) expect(extensions).toMatchObject({ code: "NOT_FOUND", requestId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(ids[0].requestId).not.toBe(ids[1].requestId);

    const otp = subscribeWs(server.url, tenant.headers, `mutation { requestOtp(email: "x-${crypto.randomUUID()}@example.com") { message } }`);
    const failed = (await otp.take()).errors?.[0].extensions as { code?: string; requestId?: string };
    otp.close();
    expect(failed).toMatchObject({ code: "INTERNAL", requestId: expect.any(String) });
    const logged = server.logs.filter((line) => line.includes(failed.requestId!)).map((line) => JSON.parse(line).msg);
    expect(logged).toContain("unexpected error");
  });
});

describe("documented errors keep their shape", () => {
  it("authentication failures are 401 {error}", async () => {
    expectJsonError(await rest(server, "GET", "/v1/user"), 401);
    expectJsonError(await rest(server, "GET", "/v1/user", { headers: { "x-api-key": "nope" } }), 401);
  });

  it("the API key revoke 404 alone uses {message}", async () => {
    const tenant = await newTenant(server);
    const res = await rest(server, "DELETE", `/v1/api-keys/${crypto.randomUUID()}`, { headers: tenant.headers });
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(contractKeys(res.body)).toEqual(["message"]);
  });
});
