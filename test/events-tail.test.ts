import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { needs, REQUIREMENTS } from "./support/requirements.js";
import { createClient } from "graphql-ws";
import WebSocket from "ws";
import { createUser, gql, rest } from "./support/http.js";
import { simulateUsdDeposit, userWithUsdAccount } from "./support/deposit-updates.js";
import { waitForEvents, type FeedEvent } from "./support/events.js";
import { EventTail } from "../src/events/tail.js";
import { LOG_START } from "../src/events/log.js";
import { createLogger } from "../src/logger.js";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";
import { settle, subscribeWs, subscriptionsOf } from "./support/subscriptions.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.stop());
const subscriptions = subscriptionsOf(() => server.url);

const cursorOf = async (tenant: Tenant) => {
  const res = await rest(server, "GET", "/v1/events/cursor", { headers: tenant.headers });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.cursor as string | null;
};

describe("the event cursor", () => {
  it("is the id of the newest event the client can see, the same on REST and GraphQL", async () => {
    const tenant = await newTenant(server);
    await createUser(server, tenant);
    const cursor = await cursorOf(tenant);
    const newest = (await rest(server, "GET", "/v1/events?limit=100", { headers: tenant.headers })).body.data.at(-1).id;
    expect(cursor).toBe(newest);
    const graphql = await gql(server, "query { eventCursor }", {}, tenant.headers);
    expect(graphql.body).toEqual({ data: { eventCursor: newest } });
    // Another client's events do not move it.
    await createUser(server, await newTenant(server));
    expect(await cursorOf(tenant)).toBe(newest);
  });

  it("needs credentials", async () => {
    expect((await rest(server, "GET", "/v1/events/cursor")).status).toBe(401);
  });

  it("lets graphql-ws's own lazy client subscribe and act at once without missing the first update", async () => {
    const tenant = await newTenant(server);
    const userId = await userWithUsdAccount(server, tenant);
    const after = await cursorOf(tenant);
    const subscribe = () =>
      subscriptions.track(subscribeWs(server.url, { "x-api-key": tenant.apiKey }, `subscription ($userId: ID, $after: ID) { depositUpdated(userId: $userId, after: $after) { id status } }`, { userId, after }));
    // No settling: the deposit is created while the subscription may still be on its way…
    const early = subscribe();
    const depositId = await simulateUsdDeposit(server, tenant, userId);
    // …or even reaches the server only after the deposit exists (the lost race, made certain).
    const late = subscribe();
    for (const updates of [early, late]) expect((await updates.take(10_000)).data).toEqual({ depositUpdated: { id: depositId, status: "PENDING" } });
  });

  it("replays into the events subscription whatever happened between taking it and subscribing", async () => {
    const tenant = await newTenant(server);
    const after = await cursorOf(tenant);
    const userId = await createUser(server, tenant);
    const events = subscriptions.track(subscribeWs(server.url, { "x-api-key": tenant.apiKey }, `subscription ($after: ID) { events(after: $after) { type data } }`, { after }));
    // Generous: an event shows once older transactions have ended, and other tests' may be running.
    expect((await events.take(20_000)).data.events).toMatchObject({ type: "user.created", data: { object: { id: userId } } });
    const second = await createUser(server, tenant);
    expect((await events.take(10_000)).data.events).toMatchObject({ type: "user.created", data: { object: { id: second } } });
  });
});

/**
 * Idle subscriptions of the shape the attacker used: an old cursor and a type that never comes.
 * Other test files share the database (their writes wake the tail too), hence the margin.
 */
describe("idle events subscriptions (PostgreSQL)", needs(REQUIREMENTS.postgres), () => {
  const IDLE = `subscription ($after: ID) { events(types: ["withdrawal.failed"], after: $after) { id } }`;
  const WINDOW_MS = 3000;
  const SOCKETS = 3;
  const PER_SOCKET = 20;

  /** Statements and connection checkouts on the server's database pool during WINDOW_MS. */
  async function databaseCallsWhileIdle(): Promise<number> {
    const pool = server.app.db.pool!;
    let calls = 0;
    const query = pool.query.bind(pool);
    const connect = pool.connect.bind(pool);
    pool.query = ((...args: Parameters<typeof query>) => (calls++, query(...args))) as typeof pool.query;
    pool.connect = ((...args: Parameters<typeof connect>) => (calls++, connect(...args))) as typeof pool.connect;
    try {
      await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
    } finally {
      pool.query = query;
      pool.connect = connect;
    }
    return calls;
  }

  it("cost the database the same with one or sixty of them", async () => {
    const tenant = await newTenant(server);
    // The feed shows an event once older transactions have ended (anywhere on the PostgreSQL server): wait for it.
    const [first] = await waitForEvents(server, tenant, 1);
    for (let i = 0; i < 5; i++) await createUser(server, tenant);
    await subscriptions.ws({ "x-api-key": tenant.apiKey }, IDLE, { after: first.id });
    const withOne = await databaseCallsWhileIdle();

    const sockets = Array.from({ length: SOCKETS }, () =>
      createClient({ url: `${server.url.replace(/^http/, "ws")}/graphql`, webSocketImpl: WebSocket, connectionParams: { "x-api-key": tenant.apiKey }, retryAttempts: 0 }),
    );
    try {
      const errors: unknown[] = [];
      for (const socket of sockets) {
        for (let i = 0; i < PER_SOCKET; i++) socket.subscribe({ query: IDLE, variables: { after: first.id } }, { next: () => undefined, error: (err) => errors.push(err), complete: () => undefined });
      }
      await settle();
      await settle();
      const withMany = await databaseCallsWhileIdle();
      expect(errors).toEqual([]);
      // One poll per second per subscription (the old design) would add about 180 calls here.
      expect(withMany, `with one: ${withOne}, with ${SOCKETS * PER_SOCKET + 1}: ${withMany}`).toBeLessThanOrEqual(withOne + 20);
    } finally {
      await Promise.all(sockets.map((socket) => socket.dispose()));
    }
  });
});

describe("event ids", () => {
  const feed = async (tenant: Tenant, query = "") => (await rest(server, "GET", `/v1/events?limit=100${query}`, { headers: tenant.headers })).body.data as FeedEvent[];
  const logIdOf = async (tenant: Tenant, objectId: string) =>
    (await server.app.db.prisma.event.findMany({ where: { clientId: tenant.clientId } })).find((row) => (row.data as { object: { id: string } }).object.id === objectId)!.id;

  it("are opaque: not the log's shared (xid, seq) position, different for each client, and meaningless to another client", async () => {
    const [one, two] = [await newTenant(server), await newTenant(server)];
    const userId = await createUser(server, one);
    const [created] = await waitForEvents(server, one, 1, "&type=user.created");
    const logId = await logIdOf(one, userId);
    expect(created.id).toMatch(/^evt_[A-Za-z0-9_-]{22}$/);
    expect(created.id).not.toBe(logId);
    // The same position seen by another client would have another id.
    expect(server.app.services.eventIds.visible(two.clientId, logId)).not.toBe(created.id);
    // Another client's id is nothing to this one.
    expect((await rest(server, "GET", `/v1/events/${created.id}`, { headers: two.headers })).status).toBe(404);
    expect((await rest(server, "GET", `/v1/events?after=${created.id}`, { headers: two.headers })).status).toBe(400);
  });

  it("resume exactly; the log's own ids are neither cursors nor ids (every transport: event-access.test.ts)", async () => {
    const tenant = await newTenant(server);
    const users = [await createUser(server, tenant), await createUser(server, tenant), await createUser(server, tenant)];
    const events = await waitForEvents(server, tenant, 3, "&type=user.created");
    expect(events.map((event) => event.data.object.id)).toEqual(users);
    expect((await feed(tenant, `&type=user.created&after=${events[0].id}`)).map((event) => event.id)).toEqual([events[1].id, events[2].id]);
    const logId = await logIdOf(tenant, users[0]);
    expect((await rest(server, "GET", `/v1/events/${logId}`, { headers: tenant.headers })).status).toBe(404);
    expect((await rest(server, "GET", `/v1/events?after=${logId}`, { headers: tenant.headers })).status).toBe(400);
  });
});

describe("a subscription whose client reads slowly", () => {
  it("leaves the shared reader when its live events pile up, then reads on from the log: nothing lost, nothing repeated, in order", async () => {
    const { db, services } = server.app;
    const tail = new EventTail({ sql: db.sql, bus: services.events, ids: services.eventIds, logger: createLogger("silent"), inboxLimit: 2 });
    const tenant = await newTenant(server);
    const events = tail.stream({ clientId: tenant.clientId, types: ["user.created"] }, LOG_START)[Symbol.asyncIterator]();
    try {
      const first = events.next();
      const users: string[] = [];
      for (let i = 0; i < 10; i++) users.push(await createUser(server, tenant));
      // Nothing is taken while the reader hands out the other nine: far more than the inbox holds.
      await waitForEvents(server, tenant, 10, "&type=user.created");
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const received = [(await first).value];
      for (let i = 1; i < 10; i++) received.push((await events.next()).value);
      expect(received.map((event) => event.data.object.id)).toEqual(users);
      expect(received.map((event) => event.id)).toEqual((await waitForEvents(server, tenant, 10, "&type=user.created")).map((event) => event.id));
    } finally {
      await events.return?.();
    }
  });
});
