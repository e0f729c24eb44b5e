import { randomUUID } from "node:crypto";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newTenant, type TestServer } from "./support/server.js";
import { errorCodes, gql, rest, userInput } from "./support/http.js";
import { signIn, startServerWithMailbox, type Mailbox } from "./support/mailbox.js";

let server: TestServer;
let mailbox: Mailbox;
beforeAll(async () => {
  ({ server, mailbox } = await startServerWithMailbox());
});
afterAll(() => server?.stop());

/** The protected route and query every case is checked on: both surfaces must refuse alike. */
async function expectRefused(headers: Record<string, string>) {
  const viaRest = await rest(server, "GET", "/v1/user", { headers });
  expect(viaRest.status).toBe(401);
  expect(Object.keys(viaRest.body)).toEqual(["error"]);
  const viaGraphql = await gql(server, "{ users { id } }", {}, headers);
  expect(viaGraphql.status).toBe(401);
  expect(errorCodes(viaGraphql)).toEqual(["UNAUTHENTICATED"]);
  expect(viaGraphql.body.data).toBeUndefined();
}

async function userEmailsSeenWith(headers: Record<string, string>): Promise<string[]> {
  const res = await rest(server, "GET", "/v1/user", { headers });
  expect(res.status).toBe(200);
  return res.body.map((user: { email: string }) => user.email);
}

const base64url = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
const seconds = (offset: number) => Math.floor(Date.now() / 1000) + offset;

/** A token for a real session row, signed as the server would unless a test says otherwise. */
async function craftToken(
  clientId: string,
  options: { alg?: string; secret?: string; exp?: number; sessionExpiresAt?: Date } = {},
): Promise<string> {
  const sessionId = randomUUID();
  await server.app.db.prisma.session.create({
    data: { id: sessionId, clientId, expiresAt: options.sessionExpiresAt ?? new Date(Date.now() + 3600_000) },
  });
  return new SignJWT({})
    .setProtectedHeader({ alg: options.alg ?? "HS256", typ: "JWT" })
    .setSubject(clientId)
    .setJti(sessionId)
    .setIssuedAt(seconds(-60))
    .setExpirationTime(options.exp ?? seconds(3600))
    .sign(new TextEncoder().encode(options.secret ?? server.app.services.config.jwtSecret));
}

describe("missing or bad API keys", () => {
  it("refuses a request without credentials", async () => {
    await expectRefused({});
  });

  it.each([["garbage"], ["fpk_000000000000.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"], [""]])("refuses the key %j", async (key) => {
    await expectRefused({ "x-api-key": key });
  });

  it("refuses a real key prefix with a wrong secret", async () => {
    const tenant = await newTenant(server);
    const forged = tenant.apiKey.replace(/\.(.)/, (_, c: string) => `.${c === "A" ? "B" : "A"}`);
    await expectRefused({ "x-api-key": forged });
  });

  it("refuses a revoked key at once", async () => {
    const tenant = await newTenant(server);
    const created = await rest(server, "POST", "/v1/api-keys", { headers: tenant.headers });
    const headers = { "x-api-key": created.body.key };
    expect((await rest(server, "GET", "/v1/user", { headers })).status).toBe(200);
    expect((await rest(server, "DELETE", `/v1/api-keys/${created.body.id}`, { headers: tenant.headers })).status).toBe(200);
    await expectRefused(headers);
  });
});

describe("session tokens", () => {
  it("a token from the OTP flow reaches the client's own resources", async () => {
    const session = await signIn(server, mailbox);
    const created = await rest(server, "POST", "/v1/user", { headers: session.headers, body: userInput() });
    expect(created.status).toBe(201);
    expect(created.body.clientId).toBe(session.clientId);
  });

  it("a token signed like the server's is accepted (the crafted cases below differ in one thing only)", async () => {
    const tenant = await newTenant(server);
    expect((await rest(server, "GET", "/v1/user", { headers: { "x-client-auth": await craftToken(tenant.clientId) } })).status).toBe(200);
  });

  it("refuses an expired token", async () => {
    const tenant = await newTenant(server);
    await expectRefused({ "x-client-auth": await craftToken(tenant.clientId, { exp: seconds(-10) }) });
  });

  it("refuses a token whose session has expired", async () => {
    const tenant = await newTenant(server);
    await expectRefused({ "x-client-auth": await craftToken(tenant.clientId, { sessionExpiresAt: new Date(Date.now() - 1000) }) });
  });

  it("refuses a token after logout", async () => {
    const session = await signIn(server, mailbox);
    await rest(server, "POST", "/v1/client-auth/logout", { headers: session.headers });
    await expectRefused(session.headers);
  });

  it("refuses an unsigned token (alg: none)", async () => {
    const tenant = await newTenant(server);
    const valid = await craftToken(tenant.clientId);
    const [, payload] = valid.split(".");
    await expectRefused({ "x-client-auth": `${base64url({ alg: "none", typ: "JWT" })}.${payload}.` });
  });

  it("refuses a token signed with another secret", async () => {
    const tenant = await newTenant(server);
    await expectRefused({ "x-client-auth": await craftToken(tenant.clientId, { secret: "another-secret-of-at-least-32-characters" }) });
  });

  it("refuses a token whose payload was changed after signing", async () => {
    const a = await newTenant(server);
    const b = await newTenant(server);
    const [header, payload, signature] = (await craftToken(a.clientId)).split(".");
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString());
    await expectRefused({ "x-client-auth": `${header}.${base64url({ ...claims, sub: b.clientId })}.${signature}` });
  });

  it("refuses a token signed with an unexpected algorithm (HS512), even with the server's secret", async () => {
    const tenant = await newTenant(server);
    await expectRefused({ "x-client-auth": await craftToken(tenant.clientId, { alg: "HS512" }) });
  });

  it("refuses a well-signed token that names another client than its session's", async () => {
    const a = await newTenant(server);
    const b = await newTenant(server);
    const sessionId = randomUUID();
    await server.app.db.prisma.session.create({ data: { id: sessionId, clientId: a.clientId, expiresAt: new Date(Date.now() + 3600_000) } });
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: "HS256" })
      .setSubject(b.clientId)
      .setJti(sessionId)
      .setIssuedAt()
      .setExpirationTime("1h")
      .sign(new TextEncoder().encode(server.app.services.config.jwtSecret));
    await expectRefused({ "x-client-auth": token });
  });

  it("refuses garbage in x-client-auth", async () => {
    await expectRefused({ "x-client-auth": "not.a.jwt" });
  });
});

describe("both credentials at once", () => {
  it("the JWT wins over the key, whichever tenant each belongs to", async () => {
    const a = await newTenant(server);
    const b = await newTenant(server);
    const aUser = userInput();
    const bUser = userInput();
    await rest(server, "POST", "/v1/user", { headers: a.headers, body: aUser });
    await rest(server, "POST", "/v1/user", { headers: b.headers, body: bUser });
    const aToken = await craftToken(a.clientId);
    const bToken = await craftToken(b.clientId);
    expect(await userEmailsSeenWith({ "x-client-auth": aToken, "x-api-key": b.apiKey })).toEqual([aUser.email]);
    expect(await userEmailsSeenWith({ "x-client-auth": bToken, "x-api-key": a.apiKey })).toEqual([bUser.email]);
    const viaGraphql = await gql(server, "{ me { id } }", {}, { "x-client-auth": aToken, "x-api-key": b.apiKey });
    expect(viaGraphql.body.data.me.id).toBe(a.clientId);
  });

  it("an invalid JWT is refused even next to a good key", async () => {
    const tenant = await newTenant(server);
    await expectRefused({ "x-client-auth": "not.a.jwt", "x-api-key": tenant.apiKey });
    const expired = await craftToken(tenant.clientId, { exp: seconds(-10) });
    await expectRefused({ "x-client-auth": expired, "x-api-key": tenant.apiKey });
  });
});
