import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newTenant, startServer, type TestServer } from "./support/server.js";
import { needs, REQUIREMENTS } from "./support/requirements.js";
import { createUser, errorCodes, gql, rest } from "./support/http.js";
import { ACTIVITY_EVENT_TYPES, allEvents, everyKindOfActivity, waitForEvents } from "./support/events.js";
import { subscribeSse, subscribeWs, settle, type Subscriber } from "./support/subscriptions.js";
import { prismaSql } from "../src/db/sql.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

describe("the events feed", () => {
  it("holds every event of the client's activity, oldest first, each object as REST shows it", async () => {
    const tenant = await newTenant(server);
    const { userId, fiatDepositId, withdrawalReference } = await everyKindOfActivity(server, tenant);
    // The tenant's own signup key (api_key.created) comes first.
    const events = await waitForEvents(server, tenant, ACTIVITY_EVENT_TYPES.length + 1);
    expect(events.map((e) => e.type)).toEqual(["api_key.created", ...ACTIVITY_EVENT_TYPES]);
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
    // Opaque ids (see "event ids" in events-tail.test.ts): the feed's order is its own.
    expect(events.every((e) => /^evt_[A-Za-z0-9_-]{22}$/.test(e.id))).toBe(true);

    const user = (await rest(server, "GET", `/v1/user/${userId}`, { headers: tenant.headers })).body;
    expect(events.find((e) => e.type === "user.created")!.data.object).toEqual(user);
    const deposits = (await rest(server, "GET", `/v1/transactions/deposits/${userId}`, { headers: tenant.headers })).body;
    const completed = events.find((e) => e.type === "deposit.completed")!.data.object;
    expect(completed).toEqual(deposits.find((d: { id: string }) => d.id === fiatDepositId));
    expect(completed.amount).toBe(250);
    const withdrawal = (await rest(server, "GET", `/v1/withdrawals/${withdrawalReference}`, { headers: tenant.headers })).body;
    expect(events.find((e) => e.type === "withdrawal.completed")!.data.object).toEqual(withdrawal);
    expect(events.find((e) => e.type === "card.transaction.created")!.data.object).toMatchObject({ userId, amount: 12.5, type: "DEBIT" });
    expect(events.find((e) => e.type === "api_key.revoked")!.data.object.revokedAt).toEqual(expect.any(String));
  });

  it("pages with after and limit, filters by type, and reads one event by id on both surfaces", async () => {
    const tenant = await newTenant(server);
    for (let i = 0; i < 3; i++) await createUser(server, tenant);
    const all = await waitForEvents(server, tenant, 4);
    const first = await rest(server, "GET", "/v1/events?limit=2", { headers: tenant.headers });
    expect(first.body).toEqual({ data: all.slice(0, 2), hasMore: true });
    const rest2 = await rest(server, "GET", `/v1/events?limit=2&after=${all[1].id}`, { headers: tenant.headers });
    expect(rest2.body).toEqual({ data: all.slice(2, 4), hasMore: false });
    const users = await rest(server, "GET", "/v1/events?type=user.created", { headers: tenant.headers });
    expect(users.body.data.map((e: { type: string }) => e.type)).toEqual(["user.created", "user.created", "user.created"]);

    expect((await rest(server, "GET", `/v1/events/${all[2].id}`, { headers: tenant.headers })).body).toEqual(all[2]);
    const graph = await gql(server, `query ($after: ID) { events(after: $after, first: 2, types: ["user.created"]) { edges { cursor node { id type data } } pageInfo { hasNextPage endCursor } } }`, { after: all[1].id }, tenant.headers);
    expect(graph.body.data.events).toEqual({
      edges: all.slice(2, 4).map((e) => ({ cursor: e.id, node: { id: e.id, type: e.type, data: e.data } })),
      pageInfo: { hasNextPage: false, endCursor: all[3].id },
    });
    const one = await gql(server, `query ($id: ID!) { event(id: $id) { id type createdAt } }`, { id: all[0].id }, tenant.headers);
    expect(one.body.data.event).toEqual({ id: all[0].id, type: all[0].type, createdAt: all[0].createdAt });
  });

  it.each([
    ["limit=0", "page size"],
    ["limit=101", "page size"],
    ["after=nope", "after"],
    // Well-formed hex, but past PostgreSQL's bigint: once a 500.
    ["after=evt_ffffffffffffffffffffffffffffffff", "after"],
    ["type=user.deleted", "unknown event type"],
  ])("refuses %s with a 400", async (query, message) => {
    const tenant = await newTenant(server);
    const res = await rest(server, "GET", `/v1/events?${query}`, { headers: tenant.headers });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain(message);
  });

  it("shows a client only its own events: another client's event is a 404", async () => {
    const [owner, other] = [await newTenant(server), await newTenant(server)];
    await createUser(server, owner);
    const [signup, created] = await waitForEvents(server, owner, 2);
    expect(created.type).toBe("user.created");
    expect((await allEvents(server, other)).map((e) => e.id)).not.toContain(created.id);
    // Another client's id is no cursor here.
    expect((await rest(server, "GET", `/v1/events?after=${signup.id}`, { headers: other.headers })).status).toBe(400);
    expect((await rest(server, "GET", `/v1/events/${created.id}`, { headers: other.headers })).status).toBe(404);
    expect((await rest(server, "GET", `/v1/events/evt_unknown`, { headers: other.headers })).status).toBe(404);
    expect(errorCodes(await gql(server, `query ($id: ID!) { event(id: $id) { id } }`, { id: created.id }, other.headers))).toEqual(["NOT_FOUND"]);
  });

  it("needs credentials", async () => {
    expect((await rest(server, "GET", "/v1/events")).status).toBe(401);
  });
});

describe("the events subscription", () => {
  const EVENTS = `subscription ($types: [String!], $after: ID) { events(types: $types, after: $after) { id type data } }`;
  const next = async (subscriber: Subscriber) => {
    const result = await subscriber.take(10_000);
    expect(result.errors).toBeUndefined();
    return { ...(result.data.events as { id: string; type: string; data: { object: { id: string } } }), sseId: result.sseId };
  };

  it.each([
    { transport: "graphql-ws", open: (tenant: { apiKey: string; headers: Record<string, string> }, variables: Record<string, unknown>) => Promise.resolve(subscribeWs(server.url, { "x-api-key": tenant.apiKey }, EVENTS, variables)) },
    { transport: "SSE", open: (tenant: { apiKey: string; headers: Record<string, string> }, variables: Record<string, unknown>) => subscribeSse(server.url, tenant.headers, EVENTS, variables) },
  ])("streams the client's events of the given types over $transport and resumes after a cursor", async ({ open }) => {
    const tenant = await newTenant(server);
    const live = await open(tenant, { types: ["user.created"] });
    await settle();
    try {
      const first = await createUser(server, tenant);
      const seen = await next(live);
      expect(seen).toMatchObject({ type: "user.created", data: { object: { id: first } } });
      live.close();
      const [second, third] = [await createUser(server, tenant), await createUser(server, tenant)];
      const resumed = await open(tenant, { types: ["user.created"], after: seen.id });
      try {
        expect([(await next(resumed)).data.object.id, (await next(resumed)).data.object.id]).toEqual([second, third]);
        await resumed.nothingWithin(1500);
      } finally {
        resumed.close();
      }
      const log = await waitForEvents(server, tenant, 3, "&type=user.created");
      expect(seen.id).toBe(log[0].id);
    } finally {
      live.close();
    }
  });
});

describe("the feed under concurrent writers (PostgreSQL)", needs(REQUIREMENTS.postgres), () => {
  it("never shows an event behind a cursor it has already given: a transaction that commits later with a smaller position is held back until it commits", async () => {
    const tenant = await newTenant(server);
    const { prisma } = server.app.db;
    const { recordEvent } = await import("../src/events/log.js");
    const [signup] = await waitForEvents(server, tenant, 1);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let written!: () => void;
    const slowWritten = new Promise<void>((resolve) => (written = resolve));
    // The slow transaction takes its position first, then stays open.
    const slow = prisma.$transaction(async (tx) => {
      await recordEvent(prismaSql(tx), { clientId: tenant.clientId, type: "user.created", object: { n: "slow" } });
      written();
      await held;
    });
    await slowWritten;
    await createUser(server, tenant);
    const whileOpen = await allEvents(server, tenant, `&after=${signup.id}`);
    expect(whileOpen).toEqual([]);
    release();
    await slow;
    const after = await waitForEvents(server, tenant, 3);
    expect(after.slice(1).map((e) => e.data.object.n ?? "fast")).toEqual(["slow", "fast"]);
  });
});
