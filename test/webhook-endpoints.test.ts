import { createServer as createTcpServer, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";
import { needs, REQUIREMENTS } from "./support/requirements.js";
import { createUser, errorCodes, gql, rest } from "./support/http.js";
import { ACTIVITY_EVENT_TYPES, everyKindOfActivity, waitForEvents, type FeedEvent } from "./support/events.js";
import { startReceiver, type Receiver, type Reply } from "./support/webhook-receiver.js";
import { isNonPublicAddress } from "../src/webhook-endpoints/url-policy.js";
import type { ResolveHost } from "../src/webhook-endpoints/resolve-host.js";
import { DeliveryWorker } from "../src/webhook-endpoints/worker.js";
import { createLogger } from "../src/logger.js";
import { MAX_PENDING_PER_ENDPOINT } from "../src/webhook-endpoints/limits.js";

/** Short, yet long enough that a busy embedded database (in this process) does not time out a prompt receiver. */
const TIMEOUT_MS = 1000;
/** Every server of this file seals secrets with one key, as instances sharing a database must. */
const ENCRYPTION_KEY = "b".repeat(64);
let server: TestServer;
const receivers: Receiver[] = [];
beforeAll(async () => {
  server = await startServer({ env: { WEBHOOK_DELIVERY: "on", WEBHOOK_RETRY_SCHEDULE: "100ms,200ms", ENCRYPTION_KEY }, webhookTimeoutMs: TIMEOUT_MS });
});
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
});
afterAll(() => server?.stop());

async function receiver(reply?: Reply) {
  const started = await startReceiver(reply);
  receivers.push(started);
  return started;
}

/** The log's own id of an event the tenant was given (rows written by hand reference it). */
const logIdOf = (tenant: Tenant, eventId: string) => server.app.services.eventIds.logId(tenant.clientId, eventId)!;

async function register(tenant: Tenant, body: Record<string, unknown>) {
  const res = await rest(server, "POST", "/v1/webhook-endpoints", { headers: tenant.headers, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; url: string; events: string[] | null; secret: string };
}

/** A TCP listener on 127.0.0.1 that accepts connections and never answers; counts what reached it. */
async function startSilentListener() {
  const sockets: Socket[] = [];
  const listener = createTcpServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  return {
    port: (listener.address() as AddressInfo).port,
    connections: () => sockets.length,
    close: () => {
      sockets.forEach((socket) => socket.destroy());
      return new Promise<void>((resolve) => listener.close(() => resolve()));
    },
  };
}

const deliveries = async (tenant: Tenant, endpointId: string, on: TestServer = server) => {
  const res = await rest(on, "GET", `/v1/webhook-endpoints/${endpointId}/deliveries?limit=100`, { headers: tenant.headers });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data as { id: string; eventId: string; attempt: number; status: number | null; succeeded: boolean; error: string | null; durationMs: number; createdAt: string; nextAttemptAt: string | null }[];
};

/** Waits until the endpoint's attempts list holds `count` attempts. */
async function waitForAttempts(tenant: Tenant, endpointId: string, count: number, timeoutMs = 15_000, on: TestServer = server) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const list = await deliveries(tenant, endpointId, on);
    if (list.length >= count || Date.now() > deadline) return list;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Verifies a received request with the standardwebhooks package and returns the event it carries. */
const verified = (secret: string, request: { headers: Record<string, unknown>; body: string }) =>
  new Webhook(secret).verify(request.body, request.headers as Record<string, string>) as FeedEvent;

describe("webhook endpoints", () => {
  it("registers an endpoint, shows its secret only once, and delivers the client's events signed per Standard Webhooks", async () => {
    const tenant = await newTenant(server);
    const hooks = await receiver();
    const endpoint = await register(tenant, { url: hooks.url, description: "orders" });
    expect(Object.keys(endpoint)).toEqual(["id", "url", "events", "description", "enabled", "secret", "createdAt", "metadata", "livemode"]);
    expect(endpoint).toMatchObject({ url: hooks.url, events: null, description: "orders", enabled: true });
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);

    const listed = await rest(server, "GET", "/v1/webhook-endpoints", { headers: tenant.headers });
    expect(listed.body.data).toEqual([{ id: endpoint.id, url: hooks.url, events: null, description: "orders", enabled: true, createdAt: expect.any(String), metadata: {}, livemode: false }]);
    expect((await rest(server, "GET", `/v1/webhook-endpoints/${endpoint.id}`, { headers: tenant.headers })).body).toEqual(listed.body.data[0]);

    const userId = await createUser(server, tenant);
    const [request] = await hooks.waitFor(1);
    const event = verified(endpoint.secret, request);
    const [, inFeed] = await waitForEvents(server, tenant, 2);
    expect(event).toEqual(inFeed);
    expect(event).toMatchObject({ type: "user.created", data: { object: { id: userId } } });
    expect(request.headers["webhook-id"]).toBe(event.id);
    expect(request.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/=]+$/);
    expect(() => verified(`whsec_${Buffer.alloc(32, 1).toString("base64")}`, request)).toThrow();

    const [attempt] = await waitForAttempts(tenant, endpoint.id, 1);
    expect(attempt).toEqual({
      id: expect.any(String), eventId: event.id, attempt: 1, status: 200, succeeded: true, error: null,
      durationMs: expect.any(Number), createdAt: expect.any(String), nextAttemptAt: null, livemode: false,
    });
  });

  it("delivers, verifiably signed, every type of event the client's own activity causes, as the feed has them", async () => {
    const tenant = await newTenant(server);
    const hooks = await receiver();
    const endpoint = await register(tenant, { url: hooks.url });
    await everyKindOfActivity(server, tenant);
    const requests = await hooks.waitForMessages(ACTIVITY_EVENT_TYPES.length);
    // At-least-once: a receiver keeps the first of each webhook-id.
    const delivered = [...new Map(requests.map((request) => [request.headers["webhook-id"], verified(endpoint.secret, request)])).values()];
    const feed = await waitForEvents(server, tenant, ACTIVITY_EVENT_TYPES.length + 1);
    const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id);
    expect(delivered.sort(byId)).toEqual(feed.slice(1).sort(byId));
    expect(new Set(delivered.map((event) => event.type))).toEqual(new Set(ACTIVITY_EVENT_TYPES));
  });

  it.each([
    ["omitted at creation are shown as null (every type)", {}, null],
    ["null at creation are shown as null (every type)", { events: null }, null],
    ["listed at creation are shown as listed", { events: ["user.created", "deposit.completed"] }, ["user.created", "deposit.completed"]],
  ])("events %s, on REST and GraphQL", async (_case, events, shown) => {
    const tenant = await newTenant(server);
    const created = await register(tenant, { url: "https://hooks.example.com/all", ...events });
    expect(created.events).toEqual(shown);
    expect((await rest(server, "GET", `/v1/webhook-endpoints/${created.id}`, { headers: tenant.headers })).body.events).toEqual(shown);
    const graph = await gql(server, "query ($id: ID!) { webhookEndpoint(id: $id) { events } webhookEndpoints { events } }", { id: created.id }, tenant.headers);
    expect(graph.body).toEqual({ data: { webhookEndpoint: { events: shown }, webhookEndpoints: [{ events: shown }] } });
    const viaGraphql = await gql(server, "mutation ($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { events } }", { input: { url: "https://hooks.example.com/g", ...events } }, tenant.headers);
    expect(viaGraphql.body).toEqual({ data: { createWebhookEndpoint: { events: shown } } });
  });

  it("keeps the secret encrypted at rest and out of the logs", async () => {
    const tenant = await newTenant(server);
    const endpoint = await register(tenant, { url: "https://hooks.example.com/x" });
    const row = await server.app.db.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } });
    const secretBody = endpoint.secret.slice("whsec_".length);
    expect(JSON.stringify(row)).not.toContain(secretBody);
    expect(server.logs.join("")).not.toContain(secretBody);
  });

  it("sends only the event types an endpoint asked for", async () => {
    const tenant = await newTenant(server);
    const hooks = await receiver();
    const endpoint = await register(tenant, { url: hooks.url, events: ["api_key.created"] });
    expect(endpoint.events).toEqual(["api_key.created"]);
    await createUser(server, tenant);
    expect((await rest(server, "POST", "/v1/api-keys", { headers: tenant.headers })).status).toBe(200);
    const [request] = await hooks.waitFor(1);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(hooks.received).toHaveLength(1);
    expect(verified(endpoint.secret, request).type).toBe("api_key.created");
  });

  it("retries after 500s and time-outs on the schedule, with the same webhook-id, and lists every attempt newest first", async () => {
    const tenant = await newTenant(server);
    const hooks = await receiver((n) => (n === 0 ? 500 : n === 1 ? "hang" : 204));
    const endpoint = await register(tenant, { url: hooks.url, events: ["user.created"] });
    await createUser(server, tenant);
    const requests = await hooks.waitFor(3);
    const attempts = await waitForAttempts(tenant, endpoint.id, 3);

    expect(requests).toHaveLength(3);
    expect(new Set(requests.map((r) => r.headers["webhook-id"])).size).toBe(1);
    requests.forEach((request) => verified(endpoint.secret, request));
    expect(requests[1].at - requests[0].at).toBeGreaterThanOrEqual(100);
    expect(requests[2].at - requests[1].at).toBeGreaterThanOrEqual(200 + TIMEOUT_MS);
    expect(attempts.map(({ attempt, status, succeeded, error }) => ({ attempt, status, succeeded, error }))).toEqual([
      { attempt: 3, status: 204, succeeded: true, error: null },
      { attempt: 2, status: null, succeeded: false, error: "timed out" },
      { attempt: 1, status: 500, succeeded: false, error: "HTTP 500" },
    ]);
    expect(attempts[0].nextAttemptAt).toBeNull();
    expect(Date.parse(attempts[2].nextAttemptAt!) - Date.parse(attempts[2].createdAt)).toBeGreaterThanOrEqual(100);
    expect(attempts[1].durationMs).toBeGreaterThanOrEqual(TIMEOUT_MS);
  });

  it("records a refused and a reset connection alike, as \"connection failed\" (the list must not work as a port scanner)", async () => {
    const tenant = await newTenant(server);
    // A port nothing listens on (connection refused), and a listener that resets every connection.
    const closed = await startSilentListener();
    await closed.close();
    const resetting = createTcpServer((socket) => socket.resetAndDestroy());
    await new Promise<void>((resolve) => resetting.listen(0, "127.0.0.1", resolve));
    try {
      const endpoints = [
        await register(tenant, { url: `http://127.0.0.1:${closed.port}/x`, events: ["user.created"] }),
        await register(tenant, { url: `http://127.0.0.1:${(resetting.address() as AddressInfo).port}/x`, events: ["user.created"] }),
      ];
      await createUser(server, tenant);
      for (const endpoint of endpoints) {
        const [first] = await waitForAttempts(tenant, endpoint.id, 1);
        expect(first).toMatchObject({ status: null, succeeded: false, error: "connection failed" });
      }
    } finally {
      await new Promise((resolve) => resetting.close(resolve));
    }
  });

  it("marks a delivery failed when the schedule is used up, and resends it on request with the same webhook-id", async () => {
    const tenant = await newTenant(server);
    let healthy = false;
    const hooks = await receiver(() => (healthy ? 200 : 503));
    const endpoint = await register(tenant, { url: hooks.url, events: ["user.created"] });
    await createUser(server, tenant);
    const attempts = await waitForAttempts(tenant, endpoint.id, 3);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(hooks.received).toHaveLength(3);
    expect(attempts.map((a) => [a.attempt, a.status, a.nextAttemptAt === null])).toEqual([[3, 503, true], [2, 503, false], [1, 503, false]]);

    healthy = true;
    const eventId = attempts[0].eventId;
    const resent = await rest(server, "POST", `/v1/events/${eventId}/resend`, { headers: tenant.headers, body: {} });
    expect(resent.status, JSON.stringify(resent.body)).toBe(202);
    expect(resent.body.data).toEqual([{ id: expect.any(String), eventId, endpointId: endpoint.id, nextAttemptAt: expect.any(String), livemode: false }]);
    const requests = await hooks.waitFor(4);
    expect(requests[3].headers["webhook-id"]).toBe(eventId);
    expect((await waitForAttempts(tenant, endpoint.id, 4))[0]).toMatchObject({ attempt: 1, status: 200, succeeded: true });
  });

  it(`refuses a resend with a 429 once the endpoint has ${MAX_PENDING_PER_ENDPOINT} deliveries pending`, async () => {
    const tenant = await newTenant(server);
    await createUser(server, tenant);
    const [event] = await waitForEvents(server, tenant, 1, "&type=user.created");
    // Registered after the event, so only the rows below are queued; a receiver that hangs keeps the resent one pending.
    const hooks = await receiver(() => "hang");
    const endpoint = await register(tenant, { url: hooks.url, events: ["user.created"] });
    const later = new Date(Date.now() + 3_600_000);
    await server.app.db.prisma.webhookDelivery.createMany({
      data: Array.from({ length: MAX_PENDING_PER_ENDPOINT - 1 }, () => ({ clientId: tenant.clientId, eventId: logIdOf(tenant, event.id), endpointId: endpoint.id, nextAttemptAt: later })),
    });
    const resend = () => rest(server, "POST", `/v1/events/${event.id}/resend`, { headers: tenant.headers, body: { endpointId: endpoint.id } });
    expect((await resend()).status).toBe(202);
    const refused = await resend();
    expect(refused.status, JSON.stringify(refused.body)).toBe(429);
    expect(JSON.stringify(refused.body)).toContain(`already has ${MAX_PENDING_PER_ENDPOINT} deliveries pending`);
  });

  it(`queues every new event, even for an endpoint that already has ${MAX_PENDING_PER_ENDPOINT} deliveries pending: nothing is recorded as not sent`, async () => {
    const tenant = await newTenant(server);
    const hooks = await receiver();
    const endpoint = await register(tenant, { url: hooks.url, events: ["user.created"] });
    await createUser(server, tenant);
    const [event] = await waitForEvents(server, tenant, 1, "&type=user.created");
    await hooks.waitForMessages(1);
    const later = new Date(Date.now() + 3_600_000);
    const { prisma } = server.app.db;
    await prisma.webhookDelivery.createMany({
      data: Array.from({ length: MAX_PENDING_PER_ENDPOINT }, () => ({ clientId: tenant.clientId, eventId: logIdOf(tenant, event.id), endpointId: endpoint.id, nextAttemptAt: later })),
    });
    const userId = await createUser(server, tenant);
    const [, second] = await waitForEvents(server, tenant, 2, "&type=user.created");
    expect(second.data.object.id).toBe(userId);
    const requests = await hooks.waitForMessages(2);
    expect(requests.map((request) => request.headers["webhook-id"])).toContain(second.id);
    // The first event's attempt and this one's, once recorded.
    const attempts = (await waitForAttempts(tenant, endpoint.id, 2)).filter((attempt) => attempt.eventId === second.id);
    expect(attempts).toEqual([expect.objectContaining({ attempt: 1, status: 200, succeeded: true })]);
    await prisma.webhookDelivery.deleteMany({ where: { endpointId: endpoint.id, nextAttemptAt: later } });
  });

  it("signs with both secrets for a day after a rotation, and with the new one alone after that", async () => {
    const tenant = await newTenant(server);
    const hooks = await receiver();
    const endpoint = await register(tenant, { url: hooks.url, events: ["user.created"] });
    const rotated = await rest(server, "POST", `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, { headers: tenant.headers });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(endpoint.secret);
    await createUser(server, tenant);
    const [request] = await hooks.waitFor(1);
    expect(String(request.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    expect(verified(rotated.body.secret, request).type).toBe("user.created");
    expect(verified(endpoint.secret, request).type).toBe("user.created");

    await server.app.db.prisma.webhookEndpoint.update({ where: { id: endpoint.id }, data: { previousSecretExpiresAt: new Date(Date.now() - 1000) } });
    await createUser(server, tenant);
    const [, later] = await hooks.waitFor(2);
    expect(verified(rotated.body.secret, later).type).toBe("user.created");
    expect(() => verified(endpoint.secret, later)).toThrow();
  });

  it("deletes an endpoint: it is gone from the list and receives nothing more", async () => {
    const tenant = await newTenant(server);
    const hooks = await receiver();
    const endpoint = await register(tenant, { url: hooks.url });
    const deleted = await rest(server, "DELETE", `/v1/webhook-endpoints/${endpoint.id}`, { headers: tenant.headers });
    expect(deleted.body).toEqual({ id: endpoint.id, deleted: true });
    expect((await rest(server, "GET", "/v1/webhook-endpoints", { headers: tenant.headers })).body.data).toEqual([]);
    expect((await rest(server, "GET", `/v1/webhook-endpoints/${endpoint.id}`, { headers: tenant.headers })).status).toBe(404);
    await createUser(server, tenant);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(hooks.received).toHaveLength(0);
  });

  it("isolates tenants: another client's endpoint, its deliveries and its events are 404s, and its receiver hears nothing of ours", async () => {
    const [owner, other] = [await newTenant(server), await newTenant(server)];
    const ownerHooks = await receiver();
    const otherHooks = await receiver();
    const endpoint = await register(owner, { url: ownerHooks.url });
    const otherEndpoint = await register(other, { url: otherHooks.url });
    await createUser(server, owner);
    await ownerHooks.waitFor(1);
    const [event] = await waitForEvents(server, owner, 1, "&type=user.created");

    for (const [method, path] of [
      ["GET", `/v1/webhook-endpoints/${endpoint.id}`],
      ["GET", `/v1/webhook-endpoints/${endpoint.id}/deliveries`],
      ["DELETE", `/v1/webhook-endpoints/${endpoint.id}`],
      ["POST", `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`],
      ["POST", `/v1/events/${event.id}/resend`],
    ]) {
      expect((await rest(server, method, path, { headers: other.headers })).status, `${method} ${path}`).toBe(404);
    }
    const crossResend = await rest(server, "POST", `/v1/events/${event.id}/resend`, { headers: owner.headers, body: { endpointId: otherEndpoint.id } });
    expect(crossResend.status).toBe(404);
    expect(errorCodes(await gql(server, `query ($id: ID!) { webhookEndpoint(id: $id) { id } }`, { id: endpoint.id }, other.headers))).toEqual(["NOT_FOUND"]);
    expect((await rest(server, "GET", "/v1/webhook-endpoints", { headers: other.headers })).body.data.map((e: { id: string }) => e.id)).toEqual([otherEndpoint.id]);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(otherHooks.received).toHaveLength(0);
  });

  it.each([
    [{ url: "ftp://hooks.example.com" }, "https or http"],
    [{ url: "not a url" }, "absolute URL"],
    [{ url: `https://hooks.example.com/${"a".repeat(2048)}` }, "absolute URL"],
    [{ url: "https://user:pass@hooks.example.com/" }, "credentials"],
    [{}, "url is required"],
    [{ url: "https://hooks.example.com", events: ["user.deleted"] }, "unknown event type"],
    [{ url: "https://hooks.example.com", events: [] }, "at least one type"],
    [{ url: "https://hooks.example.com", description: "d".repeat(501) }, "description"],
  ])("refuses %j with a 400", async (body, message) => {
    const tenant = await newTenant(server);
    const res = await rest(server, "POST", "/v1/webhook-endpoints", { headers: tenant.headers, body });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(JSON.stringify(res.body)).toContain(message);
  });
});

/** Names the tests' resolver answers with a non-public address (anything else does not resolve). */
const PRIVATE_NAMES: Record<string, string> = { "internal.example.com": "10.0.0.7", "metadata.example.com": "169.254.169.254", "loop.example.com": "127.0.0.1", localhost: "127.0.0.1" };
const testResolver: ResolveHost = async (hostname) => {
  const address = PRIVATE_NAMES[hostname];
  if (!address) throw Object.assign(new Error(`${hostname} not found`), { code: "ENOTFOUND" });
  return [{ address, family: 4 }];
};

describe("webhook endpoint URLs without WEBHOOK_ALLOW_PRIVATE_URLS (with the sandbox on)", () => {
  let production: TestServer;
  beforeAll(async () => {
    // Only the production instance delivers while these run.
    await server.app.services.deliveryWorker.stop();
    production = await startServer({
      env: { SANDBOX: "on", WEBHOOK_ALLOW_PRIVATE_URLS: "off", WEBHOOK_DELIVERY: "on", ENCRYPTION_KEY, WEBHOOK_RETRY_SCHEDULE: "1h" },
      resolveHost: testResolver,
    });
  });
  afterAll(async () => {
    await production?.stop();
    server.app.services.deliveryWorker.start();
  });

  it.each([
    "http://hooks.example.com/x",
    "https://localhost/x",
    "https://localhost./x",
    "https://LOCALHOST../x",
    "https://app.localhost./x",
    "https://127.0.0.1/x",
    "https://192.0.2.1/x",
    "https://198.51.100.7/x",
    "https://203.0.113.9/x",
    "https://192.88.99.1/x",
    "https://[2001:10::1]/x",
    "https://[2001:db8::1]/x",
    "https://loop.example.com./x",
    "https://10.1.2.3/x",
    "https://192.168.1.10/x",
    "https://169.254.169.254/latest",
    "https://[::1]/x",
    "https://[fd00::1]/x",
    "https://[::ffff:127.0.0.1]/x",
    "https://internal.example.com/x",
    "https://metadata.example.com/latest",
    "https://loop.example.com/x",
  ])("refuses %s", async (url) => {
    const tenant = await newTenant(production);
    const res = await rest(production, "POST", "/v1/webhook-endpoints", { headers: tenant.headers, body: { url } });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
  });

  it("refuses a name that resolves to loopback at registration without connecting to it", async () => {
    const local = await startSilentListener();
    try {
      const tenant = await newTenant(production);
      const res = await rest(production, "POST", "/v1/webhook-endpoints", { headers: tenant.headers, body: { url: `https://loop.example.com:${local.port}/x` } });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error).toBe("url must point at a public address");
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(local.connections()).toBe(0);
    } finally {
      await local.close();
    }
  });

  it("checks the resolved address again at delivery time: a name that resolves to loopback is not called", async () => {
    const tenant = await newTenant(production);
    const endpoint = (await rest(production, "POST", "/v1/webhook-endpoints", { headers: tenant.headers, body: { url: "https://hooks.example.com/x" } })).body;
    // As if the name had been re-pointed at a loopback address after registration.
    await production.app.db.prisma.webhookEndpoint.update({ where: { id: endpoint.id }, data: { url: "https://localhost:9/x" } });
    await createUser(production, tenant);
    const deadline = Date.now() + 15_000;
    let attempts: { status: number | null; error: string | null }[] = [];
    while (attempts.length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      attempts = (await rest(production, "GET", `/v1/webhook-endpoints/${endpoint.id}/deliveries`, { headers: tenant.headers })).body.data;
    }
    expect(attempts[0]).toMatchObject({ status: null, succeeded: false, error: "the destination resolves to an address that is not public" });
  });

  it("accepts a public https URL", async () => {
    const tenant = await newTenant(production);
    const res = await rest(production, "POST", "/v1/webhook-endpoints", { headers: tenant.headers, body: { url: "https://hooks.example.com/x" } });
    expect(res.status).toBe(201);
  });
});

describe("webhook delivery across clients", () => {
  /** How long a receiver has to answer here: the stuck endpoints hold every send this long. */
  const STUCK_TIMEOUT_MS = 8000;
  const STUCK_CLIENTS = 5;
  const RESENDS_PER_CLIENT = 12;
  let fair: TestServer;
  beforeAll(async () => {
    // Only this instance delivers while this runs.
    await server.app.services.deliveryWorker.stop();
    fair = await startServer({ env: { WEBHOOK_DELIVERY: "on", WEBHOOK_RETRY_SCHEDULE: "1h", ENCRYPTION_KEY }, webhookTimeoutMs: STUCK_TIMEOUT_MS });
  });
  afterAll(async () => {
    await fair?.stop();
    server.app.services.deliveryWorker.start();
  });

  const registerOn = async (tenant: Tenant, url: string) => {
    const res = await rest(fair, "POST", "/v1/webhook-endpoints", { headers: tenant.headers, body: { url, events: ["user.created"] } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.id as string;
  };

  it("lets no client starve the others: with five clients' endpoints hanging on many resends, another tenant's event arrives promptly", { timeout: 60_000 }, async () => {
    // Loopback receivers that accept every request and never answer.
    const stuck = await Promise.all(Array.from({ length: STUCK_CLIENTS }, () => receiver(() => "hang")));
    const prompt = await receiver(() => 204);
    await Promise.all(
      stuck.map(async (hanging) => {
        const tenant = await newTenant(fair);
        const endpointId = await registerOn(tenant, hanging.url);
        await createUser(fair, tenant);
        const [event] = await waitForEvents(fair, tenant, 1, "&type=user.created");
        for (let i = 0; i < RESENDS_PER_CLIENT; i++) {
          const resent = await rest(fair, "POST", `/v1/events/${event.id}/resend`, { headers: tenant.headers, body: { endpointId } });
          expect(resent.status, JSON.stringify(resent.body)).toBe(202);
        }
      }),
    );
    // Every stuck client has sends hanging now.
    await Promise.all(stuck.map((hanging) => hanging.waitFor(1)));

    const other = await newTenant(fair);
    await registerOn(other, prompt.url);
    const started = Date.now();
    await createUser(fair, other);
    const [arrived] = await prompt.waitFor(1, STUCK_TIMEOUT_MS);
    expect(arrived, "the other tenant's event never arrived while the stuck sends held").toBeDefined();
    expect(arrived.at - started).toBeLessThan(STUCK_TIMEOUT_MS / 4);
  });
});

describe("the address policy for production webhooks", () => {
  it.each([
    ["93.184.216.34", false],
    ["2606:4700:4700::1111", false],
    ["::ffff:93.184.216.34", false],
    ["64:ff9b::93.184.216.34", false],
    ["2002:5db8:d822::1", false],
    ["127.0.0.1", true],
    ["10.1.2.3", true],
    ["169.254.169.254", true],
    ["100.64.0.1", true],
    ["::1", true],
    ["::", true],
    ["::ffff:127.0.0.1", true],
    ["::ffff:7f00:1", true],
    ["::FFFF:169.254.169.254", true],
    ["0:0:0:0:0:ffff:10.0.0.1", true],
    ["::127.0.0.1", true],
    ["::a9fe:a9fe", true],
    ["::ffff:0:127.0.0.1", true],
    ["2002:7f00:1::", true],
    ["2002:a9fe:a9fe::1", true],
    ["64:ff9b::127.0.0.1", true],
    ["64:ff9b::a9fe:a9fe", true],
    ["64:ff9b:1::808:808", true],
    ["fec0::1", true],
    ["100::1", true],
    ["fd00::1", true],
    ["fe80::1", true],
    ["fe80::1%eth0", true],
    ["ff02::1", true],
    ["2001:db8::1", true],
    // Documentation, benchmarking and other reserved ranges, and the rest of what is not plain unicast.
    ["192.0.2.1", true],
    ["198.51.100.7", true],
    ["203.0.113.200", true],
    ["192.88.99.1", true],
    ["198.18.0.1", true],
    ["192.0.0.8", true],
    ["240.0.0.1", true],
    ["255.255.255.255", true],
    ["2001:10::1", true],
    ["2001:2::1", true],
    ["2001:20::1", true],
    ["::ffff:192.0.2.1", true],
    ["64:ff9b::203.0.113.1", true],
    ["2002:c000:0201::1", true],
    ["localhost", true],
    ["", true],
  ])("%s is refused: %s", (address, refused) => {
    expect(isNonPublicAddress(address)).toBe(refused);
  });
});

describe("DNS rebinding at delivery time (WEBHOOK_ALLOW_PRIVATE_URLS off)", () => {
  let production: TestServer;
  beforeAll(async () => {
    await server.app.services.deliveryWorker.stop();
    // No worker of its own: the test runs one with a resolver it controls.
    production = await startServer({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: "off", ENCRYPTION_KEY } });
  });
  afterAll(async () => {
    await production?.stop();
    server.app.services.deliveryWorker.start();
  });

  it("connects only to the address it checked: a name that answers public, then 127.0.0.1, never reaches a local receiver", async () => {
    const local = await startSilentListener();
    // The first answer is public (its attempt fails or times out: nothing listens there on this port); every later one is loopback.
    const asked: string[] = [];
    const resolveHost: ResolveHost = async (hostname) => {
      asked.push(hostname);
      return [{ address: asked.length === 1 ? "93.184.216.34" : "127.0.0.1", family: 4 }];
    };
    const tenant = await newTenant(production);
    const created = await rest(production, "POST", "/v1/webhook-endpoints", {
      headers: tenant.headers, body: { url: `https://rebinding.example.com:${local.port}/x`, events: ["user.created"] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await createUser(production, tenant);
    const worker = new DeliveryWorker({
      prisma: production.app.db.prisma, sql: production.app.db.sql, logger: createLogger("silent"), encryptionKey: Buffer.from(ENCRYPTION_KEY, "hex"),
      retryScheduleMs: [100], timeoutMs: TIMEOUT_MS, strictUrls: true, resolveHost, eventIds: production.app.services.eventIds,
    });
    worker.start();
    let attempts: Awaited<ReturnType<typeof deliveries>>;
    try {
      attempts = await waitForAttempts(tenant, created.body.id, 2, 15_000, production);
    } finally {
      await worker.stop();
      await local.close();
    }
    expect(local.connections()).toBe(0);
    expect(asked).toEqual(["rebinding.example.com", "rebinding.example.com"]);
    expect(attempts[0]).toMatchObject({ attempt: 2, status: null, succeeded: false, error: "the destination resolves to an address that is not public" });
  });
});

describe("delivery across instances (PostgreSQL)", needs(REQUIREMENTS.postgres), () => {
  // Instances that share a database must share ENCRYPTION_KEY (the secrets are sealed with it).
  const shared = { WEBHOOK_DELIVERY: "on", ENCRYPTION_KEY, WEBHOOK_RETRY_SCHEDULE: "1500ms" };
  // The file's own server would take these deliveries too: only the instances under test deliver here.
  beforeAll(() => server.app.services.deliveryWorker.stop());
  afterAll(() => server.app.services.deliveryWorker.start());

  it("survives a restart in the middle of the retry schedule: the next instance makes the due attempt", async () => {
    const first = await startServer({ env: shared });
    const hooks = await receiver((n) => (n === 0 ? 500 : 200));
    const tenant = await newTenant(first);
    const endpoint = (await rest(first, "POST", "/v1/webhook-endpoints", { headers: tenant.headers, body: { url: hooks.url, events: ["user.created"] } })).body;
    await createUser(first, tenant);
    await hooks.waitFor(1);
    await first.stop();

    const second = await startServer({ env: shared });
    const restartedAt = Date.now();
    try {
      const requests = await hooks.waitFor(2);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(requests).toHaveLength(2);
      expect(requests[1].at).toBeGreaterThanOrEqual(restartedAt);
      expect(requests[1].headers["webhook-id"]).toBe(requests[0].headers["webhook-id"]);
      verified(endpoint.secret, requests[1]);
      const attempts = (await rest(second, "GET", `/v1/webhook-endpoints/${endpoint.id}/deliveries`, { headers: tenant.headers })).body.data;
      expect(attempts.map((a: { attempt: number; status: number }) => [a.attempt, a.status])).toEqual([[2, 200], [1, 500]]);
    } finally {
      await second.stop();
    }
  });

  it("two instances delivering from one queue never make the same attempt twice", async () => {
    const idle = { ...shared, WEBHOOK_DELIVERY: "off" };
    const instances = [await startServer({ env: idle }), await startServer({ env: idle })];
    // A slow receiver keeps both workers busy at once.
    const hooks = await receiver(() => new Promise((resolve) => setTimeout(() => resolve(200), 30)));
    try {
      const tenant = await newTenant(instances[0]);
      const endpoint = (await rest(instances[0], "POST", "/v1/webhook-endpoints", { headers: tenant.headers, body: { url: hooks.url, events: ["user.created"] } })).body;
      const users = 40;
      await Promise.all(Array.from({ length: users }, (_, i) => createUser(instances[i % 2], tenant)));
      // Both workers start on a full queue at the same moment.
      for (const instance of instances) instance.app.services.deliveryWorker.start();
      const requests = await hooks.waitFor(users, 20_000);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(requests).toHaveLength(users);
      expect(new Set(requests.map((r) => r.headers["webhook-id"])).size).toBe(users);
      const attempts = (await rest(instances[1], "GET", `/v1/webhook-endpoints/${endpoint.id}/deliveries?limit=100`, { headers: tenant.headers })).body.data;
      expect(attempts).toHaveLength(users);
      expect(attempts.every((a: { attempt: number; succeeded: boolean }) => a.attempt === 1 && a.succeeded)).toBe(true);
    } finally {
      await Promise.all(instances.map((instance) => instance.stop()));
    }
  });

  it("a client whose endpoints never answer does not hold up another client's webhooks", async () => {
    const silent = await startSilentListener();
    const instance = await startServer({ env: { ...shared, WEBHOOK_RETRY_SCHEDULE: "1h" }, webhookTimeoutMs: 8000 });
    try {
      const stuck = await newTenant(instance);
      for (let i = 0; i < 5; i++) {
        const res = await rest(instance, "POST", "/v1/webhook-endpoints", { headers: stuck.headers, body: { url: `http://127.0.0.1:${silent.port}/hooks/${i}`, events: ["user.created"] } });
        expect(res.status).toBe(201);
      }
      await Promise.all(Array.from({ length: 4 }, () => createUser(instance, stuck)));
      const deadline = Date.now() + 10_000;
      while (silent.connections() < 4 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
      expect(silent.connections()).toBeGreaterThanOrEqual(4);

      const other = await newTenant(instance);
      const hooks = await receiver();
      expect((await rest(instance, "POST", "/v1/webhook-endpoints", { headers: other.headers, body: { url: hooks.url, events: ["user.created"] } })).status).toBe(201);
      const queuedAt = Date.now();
      await createUser(instance, other);
      const [request] = await hooks.waitFor(1, 12_000);
      expect(request, "the other client's webhook did not come within 12 s").toBeDefined();
      expect(request.at - queuedAt).toBeLessThan(2000);
    } finally {
      await silent.close();
      await instance.stop();
    }
  });
});

describe("the endpoint cap under concurrency (PostgreSQL)", needs(REQUIREMENTS.postgres), () => {
  it("30 registrations at once leave exactly 20 endpoints; the rest are 400s (three tenants at a time, to give a race every chance)", async () => {
    const tenants = await Promise.all([1, 2, 3].map(() => newTenant(server)));
    const statuses = await Promise.all(tenants.map((tenant) => Promise.all(Array.from({ length: 30 }, (_, i) =>
      rest(server, "POST", "/v1/webhook-endpoints", { headers: tenant.headers, body: { url: `https://hooks.example.com/${i}` } }).then((res) => res.status)))));
    for (const [i, tenant] of tenants.entries()) {
      expect(statuses[i].sort()).toEqual([...Array(20).fill(201), ...Array(10).fill(400)]);
      expect((await rest(server, "GET", "/v1/webhook-endpoints", { headers: tenant.headers })).body.data).toHaveLength(20);
    }
  });
});
