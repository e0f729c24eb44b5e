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

/** A live subscription, seen from the client: what ends it is the test's subject. */
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
  const ended = connection.closed.then((code) => {
    closed = true;
    return { code };
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
  return subscriber;
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
      async credential() {
        const { tenant, keyId, key } = await secondKey(server);
        return { headers: { "x-api-key": key }, end: () => rest(server, "DELETE", `/v1/api-keys/${keyId}`, { headers: tenant.headers }) };
      },
    },
    {
      ending: "its JWT session is logged out",
      async credential() {
        const tenant = await newTenant(server);
        const headers = { "x-client-auth": await craftSessionToken(server, tenant.clientId) };
        return { headers, end: () => rest(server, "POST", "/v1/client-auth/logout", { headers }) };
      },
    },
  ];
  const TRANSPORTS = [
    { transport: "graphql-ws", subscribe: async (headers: Record<string, string>) => overWebsocket(server, headers) },
    { transport: "SSE", subscribe: overSse },
  ];

  it.each(ENDINGS.flatMap((ending) => TRANSPORTS.map((transport) => ({ ...ending, ...transport }))))(
    "a $transport subscription ends soon after $ending",
    async ({ transport, credential, subscribe }) => {
      const { headers, end } = await credential();
      const subscriber = await subscribe(headers);
      await settle();
      await subscriber.nothingWithin(100);
      const endedAt = Date.now();
      expect((await end()).status).toBe(200);
      const { afterMs, reason } = await endOf(subscriber, endedAt);
      expect(afterMs).toBeLessThan(ENDS_WITHIN_MS);
      if (transport === "graphql-ws") expect(reason).toMatchObject({ code: 4401 });
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
    if (transport === "graphql-ws") expect(reason).toMatchObject({ code: 4401 });
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
      expect(reason).toMatchObject({ code: 4401 });
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
