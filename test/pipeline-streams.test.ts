import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { newTenant, startServer, type TestServer } from "./support/server.js";
import { needs, REQUIREMENTS } from "./support/requirements.js";
import { rest } from "./support/http.js";
import { subscribeSse, settle } from "./support/subscriptions.js";
import { connectWs, craftSessionToken } from "./support/pipeline.js";

const DEPOSIT_UPDATED = `subscription { depositUpdated { id status } }`;
/** The promise: a stream ends within a second of its credential; the margin is for a loaded test machine. */
const ENDS_WITHIN_MS = 1500;

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

/**
 * A live subscription, seen from the client: what ends it is the test's subject. `ended` resolves
 * with how it ended: a websocket's close `{code, reason}`, or an SSE stream's last result before its
 * `event: complete`.
 */
type Stream = { ended: Promise<unknown>; nothingWithin(ms: number): Promise<void>; close(): void };

const open: Stream[] = [];
afterEach(() => open.splice(0).forEach((stream) => stream.close()));

/**
 * depositUpdated over graphql-ws, ended when the server closes the connection (with its close code):
 * the subscription's own completion may reach the client just before the close, so it is not the end watched here.
 */
function overWebsocket(on: TestServer, connectionParams: Record<string, string>): Stream {
  const connection = connectWs(on, connectionParams);
  const received: unknown[] = [];
  let closed = false;
  const ended = connection.closedWith.then((close) => {
    closed = true;
    return close;
  });
  connection.client.subscribe({ query: DEPOSIT_UPDATED }, { next: (result) => received.push(result), error: () => {}, complete: () => {} });
  const stream: Stream = {
    ended,
    async nothingWithin(ms) {
      await new Promise((resolve) => setTimeout(resolve, ms));
      if (closed || received.length) throw new Error(`the stream ended or spoke early: ${JSON.stringify(received)}`);
    },
    close: () => void connection.dispose(),
  };
  open.push(stream);
  return stream;
}

async function overSse(headers: Record<string, string>): Promise<Stream> {
  const subscriber = await subscribeSse(server.url, headers, DEPOSIT_UPDATED);
  open.push(subscriber);
  expect(subscriber.status).toBe(200);
  return { ...subscriber, ended: subscriber.ended.then(() => subscriber.take(0).catch(() => undefined)) };
}

/** How each transport says a stream ended with its credential, revoked or expired. */
function expectEndedBecause(transport: string, how: "revoked" | "expired", reason: unknown) {
  if (transport === "graphql-ws") return expect(reason).toEqual({ code: 4401, reason: expect.stringMatching(how === "revoked" ? /revoked or logged out/ : /has expired/) });
  expect(reason).toMatchObject({ errors: [{ message: expect.stringMatching(/^The credential this stream was opened with/), extensions: { code: "UNAUTHENTICATED", details: { reason: how } } }] });
}


/** How long after `from` the subscriber ended, and how (a websocket's close event, or undefined for an SSE stream's end). */
async function endOf(subscriber: Stream, from: number, timeoutMs = 5000): Promise<{ afterMs: number; reason: unknown }> {
  const reason = await Promise.race([
    subscriber.ended,
    new Promise((_, reject) => setTimeout(() => reject(new Error(`the stream was still open ${timeoutMs} ms later`)), timeoutMs)),
  ]);
  return { afterMs: Date.now() - from, reason };
}

/** A second API key of a new tenant, so that the tenant's first key can revoke it. */
async function secondKey(on: TestServer) {
  const tenant = await newTenant(on);
  const created = await rest(on, "POST", "/v1/api-keys", { headers: tenant.headers });
  expect(created.status).toBe(200);
  return { tenant, keyId: created.body.id as string, key: created.body.key as string };
}

describe("streams end with their credential", () => {
  /** A live credential of a new tenant, and how to end it from outside the stream. */
  const ENDINGS = [
    {
      ending: "its API key is revoked by another key of the client",
      how: "revoked" as const,
      async credential() {
        const { tenant, keyId, key } = await secondKey(server);
        return { headers: { "x-api-key": key }, end: () => rest(server, "DELETE", `/v1/api-keys/${keyId}`, { headers: tenant.headers }) };
      },
    },
    {
      ending: "its JWT session is logged out",
      how: "revoked" as const,
      async credential() {
        const tenant = await newTenant(server);
        const headers = { "x-client-auth": await craftSessionToken(server, tenant.clientId) };
        return { headers, end: () => rest(server, "POST", "/v1/client-auth/logout", { headers }) };
      },
    },
    {
      ending: "its API key is rolled without a grace period",
      how: "expired" as const,
      async credential() {
        const { tenant, keyId, key } = await secondKey(server);
        return { headers: { "x-api-key": key }, end: () => rest(server, "POST", `/v1/api-keys/${keyId}/roll`, { headers: tenant.headers, body: { expiresInHours: 0 } }) };
      },
    },
  ];
  const TRANSPORTS = [
    { transport: "graphql-ws", subscribe: async (headers: Record<string, string>) => overWebsocket(server, headers) },
    { transport: "SSE", subscribe: overSse },
  ];

  it.each(ENDINGS.flatMap((ending) => TRANSPORTS.map((transport) => ({ ...ending, ...transport }))))(
    "a $transport subscription ends soon after $ending",
    async ({ transport, how, credential, subscribe }) => {
      const { headers, end } = await credential();
      const subscriber = await subscribe(headers);
      await settle();
      await subscriber.nothingWithin(100);
      const endedAt = Date.now();
      expect((await end()).status).toBe(200);
      const { afterMs, reason } = await endOf(subscriber, endedAt);
      expect(afterMs).toBeLessThan(ENDS_WITHIN_MS);
      expectEndedBecause(transport, how, reason);
    },
  );

  it.each([
    { transport: "graphql-ws", subscribe: async (token: string) => overWebsocket(server, { "x-client-auth": token }) },
    { transport: "SSE", subscribe: (token: string) => overSse({ "x-client-auth": token }) },
  ])("a $transport stream opened with a session that expires in 2 s ends at the expiry, not before", async ({ transport, subscribe }) => {
    const tenant = await newTenant(server);
    const expiresAt = Date.now() + 2000;
    const token = await craftSessionToken(server, tenant.clientId, { sessionExpiresAt: new Date(expiresAt) });
    const subscriber = await subscribe(token);
    const { reason } = await endOf(subscriber, expiresAt, 6000);
    const endedAt = Date.now();
    expect(endedAt).toBeGreaterThanOrEqual(expiresAt - 50);
    expect(endedAt - expiresAt).toBeLessThan(ENDS_WITHIN_MS);
    expectEndedBecause(transport, "expired", reason);
  });

  // Instances see each other's revocations only through a shared PostgreSQL; the embedded database is one process's.
  it("a revocation on instance A closes a graphql-ws stream held on instance B (PostgreSQL only)", needs(REQUIREMENTS.postgres), async () => {
    const other = await startServer();
    try {
      const { tenant, keyId, key } = await secondKey(server);
      const subscriber = overWebsocket(other, { "x-api-key": key });
      await settle();
      await subscriber.nothingWithin(100);
      const revokedAt = Date.now();
      expect((await rest(server, "DELETE", `/v1/api-keys/${keyId}`, { headers: tenant.headers })).status).toBe(200);
      const { afterMs, reason } = await endOf(subscriber, revokedAt);
      expectEndedBecause("graphql-ws", "revoked", reason);
      expect(afterMs).toBeLessThan(ENDS_WITHIN_MS);
    } finally {
      await other.stop();
    }
  });

  it("a stream whose credential is still valid stays open", async () => {
    const { key } = await secondKey(server);
    const subscriber = overWebsocket(server, { "x-api-key": key });
    await expect(endOf(subscriber, Date.now(), 2000)).rejects.toThrow(/still open/);
  });
});

describe("a graphql-ws connection refused at connection_init is closed with a code and a reason", () => {
  it.each([
    { refusal: "no credential", params: async () => ({}), reason: /^Missing credentials: send x-api-key or x-client-auth$/ },
    { refusal: "an unknown API key", params: async () => ({ "x-api-key": "fpk_000000000000.nope" }), reason: /^Invalid, revoked or expired API key$/ },
    {
      refusal: "an API key used from outside its allowlist",
      async params() {
        const tenant = await newTenant(server);
        const created = await rest(server, "POST", "/v1/api-keys", { headers: tenant.headers, body: { allowedIps: ["203.0.113.0/24"] } });
        return { "x-api-key": created.body.key as string };
      },
      reason: /may not be used from this address/,
    },
  ])("$refusal: 4403 with the reason", async ({ params, reason }) => {
    const connection = connectWs(server, await params());
    try {
      const close = await connection.closedWith;
      expect(close.code).toBe(4403);
      expect(close.reason).toMatch(reason);
    } finally {
      await connection.dispose();
    }
  });
});
