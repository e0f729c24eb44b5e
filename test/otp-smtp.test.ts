import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { testDatabaseUrl, type TestServer } from "./support/server.js";
import { needs, REQUIREMENTS } from "./support/requirements.js";
import { errorCodes, gql, rest, contractKeys, contractBody } from "./support/http.js";
import { signIn, startServerWithMailbox, type Mailbox } from "./support/mailbox.js";

let server: TestServer;
let mailbox: Mailbox;
beforeAll(async () => {
  ({ server, mailbox } = await startServerWithMailbox());
});
afterAll(() => server?.stop());

const newEmail = () => `client-${crypto.randomUUID()}@example.com`;
const requestOtp = (email: unknown, name?: string) => rest(server, "POST", "/v1/client-auth/otp", { body: { email, name } });
const verify = (email: string, otp: string) => rest(server, "POST", "/v1/client-auth/verify", { body: { email, otp } });
const wrongCode = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, "0");

describe("POST /v1/client-auth/otp", () => {
  it("answers 200 {message, expiresAt} and mails a 6-digit code that expires in 10 minutes", async () => {
    const email = newEmail();
    const before = Date.now();
    const res = await requestOtp(email);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(["expiresAt", "message"]);
    const expiresAt = Date.parse(res.body.expiresAt);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 10 * 60_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 10 * 60_000);
    expect(await mailbox.codeFor(email)).toMatch(/^\d{6}$/);
  });

  it("gives a known and an unknown address the same answer", async () => {
    const known = await signIn(server, mailbox);
    const knownEmail = (await server.app.db.prisma.client.findUniqueOrThrow({ where: { id: known.clientId } })).email;
    const forKnown = await requestOtp(knownEmail);
    const forUnknown = await requestOtp(newEmail());
    expect([forKnown.status, forUnknown.status]).toEqual([200, 200]);
    expect(forKnown.body.message).toBe(forUnknown.body.message);
    expect(Object.keys(forKnown.body)).toEqual(Object.keys(forUnknown.body));
  });

  it.each([["not-an-email"], [""], [42]])("refuses the email %j with 400 {error}", async (email) => {
    const res = await requestOtp(email);
    expect(res.status).toBe(400);
    expect(contractKeys(res.body)).toEqual(["error"]);
    expect(res.body.error).toMatch(/email/);
  });

  it("refuses a missing email with 400 naming it", async () => {
    const res = await rest(server, "POST", "/v1/client-auth/otp", { body: {} });
    expect(res.status).toBe(400);
    expect(contractBody(res.body)).toEqual({ error: "email is required" });
  });

  it("answers the sixth request for one address within 10 minutes with 429 {error} and Retry-After", async () => {
    const email = newEmail();
    for (let i = 0; i < 5; i++) expect((await requestOtp(email)).status).toBe(200);
    const limited = await requestOtp(email);
    expect(limited.status).toBe(429);
    expect(contractKeys(limited.body)).toEqual(["error"]);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await requestOtp(newEmail())).status).toBe(200);
  });

  it("lets exactly five of ten simultaneous requests for one address through", async () => {
    const email = newEmail();
    const statuses = (await Promise.all(Array.from({ length: 10 }, () => requestOtp(email)))).map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(5);
  });
});

describe("POST /v1/client-auth/verify", () => {
  it("signs an unknown address up on the first verify and answers {token, expiresAt, client}", async () => {
    const email = newEmail();
    await requestOtp(email.toUpperCase(), "Acme Ltd");
    const res = await verify(email, await mailbox.codeFor(email));
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(["client", "expiresAt", "token"]);
    expect(Object.keys(res.body.client).sort()).toEqual(["createdAt", "email", "id", "name"]);
    expect(res.body.client).toMatchObject({ email, name: "Acme Ltd" });
    const ttl = Date.parse(res.body.expiresAt) - Date.now();
    expect(ttl).toBeGreaterThan(59 * 60_000);
    expect(ttl).toBeLessThanOrEqual(60 * 60_000);
    // The business signed up: its test and live tenants (SPEC §15).
    expect(await server.app.db.prisma.client.count({ where: { email } })).toBe(2);
  });

  it("signs an existing client in to the same account", async () => {
    const email = newEmail();
    const first = await signIn(server, mailbox, email);
    const second = await signIn(server, mailbox, email);
    expect(second.clientId).toBe(first.clientId);
    expect(second.token).not.toBe(first.token);
  });

  it("refuses a wrong code with 401 {error}; the right code still works", async () => {
    const email = newEmail();
    await requestOtp(email);
    const code = await mailbox.codeFor(email);
    const wrong = await verify(email, wrongCode(code));
    expect(wrong.status).toBe(401);
    expect(contractKeys(wrong.body)).toEqual(["error"]);
    expect((await verify(email, code)).status).toBe(200);
  });

  it("locks the code after 5 wrong tries: the right code is then refused", async () => {
    const email = newEmail();
    await requestOtp(email);
    const code = await mailbox.codeFor(email);
    for (let i = 0; i < 5; i++) expect((await verify(email, wrongCode(code))).status).toBe(401);
    const locked = await verify(email, code);
    expect(locked.status).toBe(401);
    expect(contractKeys(locked.body)).toEqual(["error"]);
  });

  // The code's row is held locked while the guesses arrive, so that they are all in flight at once.
  it("counts guesses that arrive together against the same 5 tries: no more are ever checked", needs(REQUIREMENTS.postgres), async () => {
    const email = newEmail();
    await requestOtp(email);
    const code = await mailbox.codeFor(email);
    const locker = new pg.Client({ connectionString: testDatabaseUrl });
    await locker.connect();
    try {
      await locker.query("BEGIN");
      await locker.query("SELECT 1 FROM otp_codes WHERE email = $1 FOR UPDATE", [email]);
      const guesses = Promise.all(Array.from({ length: 8 }, () => verify(email, wrongCode(code))));
      await new Promise((resolve) => setTimeout(resolve, 1000));
      await locker.query("COMMIT");
      expect((await guesses).map((res) => res.status)).toEqual(Array(8).fill(401));
    } finally {
      await locker.end();
    }
    const stored = await server.app.db.prisma.otpCode.findFirstOrThrow({ where: { email } });
    expect(stored.attempts).toBe(5);
    expect((await verify(email, code)).status).toBe(401);
  });

  it("refuses an expired code with 401", async () => {
    const email = newEmail();
    await requestOtp(email);
    const code = await mailbox.codeFor(email);
    await server.app.db.prisma.otpCode.updateMany({ where: { email }, data: { expiresAt: new Date(Date.now() - 1000) } });
    const res = await verify(email, code);
    expect(res.status).toBe(401);
    expect(contractKeys(res.body)).toEqual(["error"]);
  });

  it("accepts a code only once", async () => {
    const email = newEmail();
    await requestOtp(email);
    const code = await mailbox.codeFor(email);
    expect((await verify(email, code)).status).toBe(200);
    expect((await verify(email, code)).status).toBe(401);
  });

  it("refuses a code that was never requested with 401, and a malformed one with 400", async () => {
    expect((await verify(newEmail(), "123456")).status).toBe(401);
    const malformed = await verify(newEmail(), "12ab");
    expect(malformed.status).toBe(400);
    expect(malformed.body.error).toMatch(/otp/);
  });
});

describe("session status and logout", () => {
  it("status answers {authenticated: true, client, expiresAt} for a session token", async () => {
    const session = await signIn(server, mailbox);
    const res = await rest(server, "GET", "/v1/client-auth/status", { headers: session.headers });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(["authenticated", "client", "expiresAt"]);
    expect(res.body.authenticated).toBe(true);
    expect(res.body.client.id).toBe(session.clientId);
    expect(Object.keys(res.body.client).sort()).toEqual(["createdAt", "email", "id", "name"]);
  });

  it("status without a session token is 401 {error}", async () => {
    const res = await rest(server, "GET", "/v1/client-auth/status");
    expect(res.status).toBe(401);
    expect(contractKeys(res.body)).toEqual(["error"]);
  });

  it("logout answers {success: true}; the token is refused everywhere afterwards", async () => {
    const session = await signIn(server, mailbox);
    expect((await rest(server, "GET", "/v1/user", { headers: session.headers })).status).toBe(200);
    const out = await rest(server, "POST", "/v1/client-auth/logout", { headers: session.headers });
    expect(out.status).toBe(200);
    expect(out.body).toEqual({ success: true });
    for (const [method, path] of [["GET", "/v1/client-auth/status"], ["GET", "/v1/user"], ["POST", "/v1/api-keys"], ["POST", "/v1/client-auth/logout"]]) {
      const res = await rest(server, method, path, { headers: session.headers });
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(contractKeys(res.body)).toEqual(["error"]);
    }
    expect(errorCodes(await gql(server, "{ me { id } }", {}, session.headers))).toEqual(["UNAUTHENTICATED"]);
  });
});

describe("OTP over GraphQL", () => {
  it("requestOtp, verifyOtp, authStatus and logout sign in and out like REST", async () => {
    const email = newEmail();
    const requested = await gql(server, `mutation ($email: String!) { requestOtp(email: $email) { message expiresAt } }`, { email });
    expect(requested.body.data.requestOtp).toEqual({ message: expect.any(String), expiresAt: expect.any(String) });
    const otp = await mailbox.codeFor(email);
    const verified = await gql(
      server,
      `mutation ($email: String!, $otp: String!) { verifyOtp(email: $email, otp: $otp) { token expiresAt client { id email } } }`,
      { email, otp },
    );
    const { token, client } = verified.body.data.verifyOtp;
    expect(client.email).toBe(email);
    const headers = { "x-client-auth": token };
    const status = await gql(server, `{ authStatus { authenticated client { id } } me { id email } }`, {}, headers);
    expect(status.body.data).toEqual({ authStatus: { authenticated: true, client: { id: client.id } }, me: { id: client.id, email } });
    expect((await gql(server, `mutation { logout { success } }`, {}, headers)).body.data).toEqual({ logout: { success: true } });
    expect(errorCodes(await gql(server, `{ me { id } }`, {}, headers))).toEqual(["UNAUTHENTICATED"]);
  });

  it("a wrong code is UNAUTHENTICATED and a bad email BAD_USER_INPUT", async () => {
    const email = newEmail();
    await gql(server, `mutation ($email: String!) { requestOtp(email: $email) { message } }`, { email });
    const code = await mailbox.codeFor(email);
    const wrong = await gql(server, `mutation ($e: String!, $o: String!) { verifyOtp(email: $e, otp: $o) { token } }`, { e: email, o: wrongCode(code) });
    expect(errorCodes(wrong)).toEqual(["UNAUTHENTICATED"]);
    const bad = await gql(server, `mutation { requestOtp(email: "nope") { message } }`);
    expect(errorCodes(bad)).toEqual(["BAD_USER_INPUT"]);
  });
});

describe("secrets in the log", () => {
  it("never writes the sign-in code to the server log when SMTP_URL is set", async () => {
    const email = newEmail();
    await requestOtp(email);
    const code = await mailbox.codeFor(email);
    await verify(email, wrongCode(code));
    await verify(email, code);
    // As a token of its own: request ids (hex) and timestamps (digits) hold any six digits now and then.
    expect(server.logs.join("\n")).not.toMatch(new RegExp(`(?<![0-9A-Za-z])${code}(?![0-9A-Za-z])`));
  });
});
