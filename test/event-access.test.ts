import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Resource } from "../src/caller/permissions.js";
import { EVENT_RESOURCES, EVENT_TYPES, type EventType } from "../src/events/types.js";
import { allEvents, everyKindOfActivity, type FeedEvent } from "./support/events.js";
import { DEPOSIT_SUBSCRIPTION_TRANSPORTS, EVENTS_SUBSCRIPTION_TRANSPORTS, FEED_TRANSPORTS } from "./support/event-reads.js";
import { gql, rest } from "./support/http.js";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";

/**
 * Who may read which events, on every surface that shows them: the feed (REST, GraphQL over POST
 * and GET), the `events` and `depositUpdated` subscriptions (graphql-ws, SSE), one event by id, and
 * webhook endpoints (which send them on).
 */
let server: TestServer;
let tenant: Tenant;
let other: Tenant;
/** The tenant's whole feed, as its full key reads it. */
let feed: FeedEvent[];

type Grants = Partial<Record<Resource, "read" | "write">>;
/** Every resource some event type shows, each with the types that need its read. */
const FAMILIES = [...new Set(Object.values(EVENT_RESOURCES))].map((resource) => ({
  resource,
  types: EVENT_TYPES.filter((type) => EVENT_RESOURCES[type] === resource),
}));
const EVERY_READ: Grants = Object.fromEntries(FAMILIES.map(({ resource }) => [resource, "read"]));
/** The restricted keys the tests use, made before the feed is read (each writes an api_key.created event). */
const KEY_GRANTS: Grants[] = [
  ...FAMILIES.map(({ resource }): Grants => ({ events: "read", [resource]: "read" })),
  { events: "read" },
  { deposits: "read" },
  { events: "read", deposits: "read" },
  { events: "write", users: "read" },
  { events: "write", accounts: "read" },
  { events: "write", cards: "read" },
  { events: "write", users: "read", deposits: "read" },
  { events: "write", ...EVERY_READ },
];
const grantsId = (grants: Grants) => JSON.stringify(Object.entries(grants).sort());
const keys = new Map<string, string>();
/** The tenant's key with exactly these grants. */
function keyWith(grants: Grants): string {
  const key = keys.get(grantsId(grants));
  if (!key) throw new Error(`no key made for ${grantsId(grants)}: add it to KEY_GRANTS`);
  return key;
}

beforeAll(async () => {
  server = await startServer();
  [tenant, other] = [await newTenant(server), await newTenant(server)];
  await everyKindOfActivity(server, tenant);
  for (const grants of KEY_GRANTS) {
    const res = await rest(server, "POST", "/v1/api-keys", { headers: tenant.headers, body: { permissions: grants } });
    if (res.status !== 200) throw new Error(`key ${grantsId(grants)}: ${res.status} ${JSON.stringify(res.body)}`);
    keys.set(grantsId(grants), res.body.key);
  }
  await everyKindOfActivity(server, other);
  // The feed shows an event once older transactions have ended: wait for the last one.
  for (let tries = 0; !(feed = await allEvents(server, tenant)).some((event) => event.type === "api_key.revoked") && tries < 100; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
});
afterAll(() => server?.stop());

const HISTORY_TRANSPORTS = [...FEED_TRANSPORTS, ...EVENTS_SUBSCRIPTION_TRANSPORTS];

describe("event cursors", () => {
  /** Each way a cursor reaches the server: `after`, and over SSE the Last-Event-ID header. */
  const CURSOR_TRANSPORTS = [
    ...HISTORY_TRANSPORTS.map((transport) => ({ ...transport, cursor: "after" as const })),
    ...DEPOSIT_SUBSCRIPTION_TRANSPORTS.map((transport) => ({ ...transport, cursor: "after" as const })),
    ...[EVENTS_SUBSCRIPTION_TRANSPORTS[1], DEPOSIT_SUBSCRIPTION_TRANSPORTS[1]].map((transport) => ({ ...transport, transport: `${transport.transport} (Last-Event-ID)`, cursor: "lastEventId" as const })),
  ];
  /** The log's own id of the tenant's first event: a shared (transaction id, sequence) position. */
  const logIdOfFirst = async () => (await server.app.db.prisma.event.findFirstOrThrow({ where: { clientId: tenant.clientId }, orderBy: [{ xid: "asc" }, { seq: "asc" }] })).id;
  const CURSORS: [string, () => Promise<string>][] = [
    ["the log's own id of one of the caller's events (evt_ + 32 hex digits)", logIdOfFirst],
    ["a made-up log position", async () => `evt_${"0".repeat(15)}1${"0".repeat(15)}1`],
    ["another tenant's event id", async () => (await allEvents(server, other))[1].id],
    ["text that is no event id", async () => "yesterday"],
  ];

  it.each(CURSOR_TRANSPORTS.flatMap((transport) => CURSORS.map(([what, cursor]) => ({ ...transport, what, cursor: transport.cursor, make: cursor }))))(
    "$transport: $what is a 400 naming after",
    async ({ read, cursor, make }) => {
      const value = await make();
      const result = await read(server, tenant.apiKey, { count: 1, ...(cursor === "after" ? { after: value } : { lastEventId: value }) });
      expect(result.error, JSON.stringify(result)).toMatchObject({ code: "BAD_USER_INPUT", param: "after" });
    },
  );

  it.each(CURSOR_TRANSPORTS)("$transport: the caller's own event id resumes after it", async ({ read, cursor, transport }) => {
    const deposits = feed.filter((event) => EVENT_RESOURCES[event.type as EventType] === "deposits");
    const start = transport.startsWith("depositUpdated") ? deposits[0] : feed[0];
    const expected = transport.startsWith("depositUpdated") ? deposits.slice(1) : feed.slice(1);
    const result = await read(server, tenant.apiKey, { count: expected.length, ...(cursor === "after" ? { after: start.id } : { lastEventId: start.id }) });
    expect(result.error).toBeUndefined();
    expect(result.events!.map((event) => event.id)).toEqual(expected.map((event) => event.id));
  });

  it("an event id in the log's own form names no event (REST and GraphQL 404)", async () => {
    const logId = await logIdOfFirst();
    expect((await rest(server, "GET", `/v1/events/${logId}`, { headers: tenant.headers })).status).toBe(404);
    const graph = await gql(server, `query ($id: ID!) { event(id: $id) { id } }`, { id: logId }, tenant.headers);
    expect(graph.body.errors?.[0].extensions?.code).toBe("NOT_FOUND");
  });
});

describe("what a restricted key reads of the events", () => {

  it.each(HISTORY_TRANSPORTS.flatMap((transport) => FAMILIES.map((family) => ({ ...transport, ...family }))))(
    "$transport with events:read and $resource:read: only $resource events",
    async ({ read, resource, types }) => {
      const expected = feed.slice(1).filter((event) => (types as readonly string[]).includes(event.type));
      expect(expected.length, `the activity writes ${resource} events`).toBeGreaterThan(0);
      const result = await read(server, keyWith({ events: "read", [resource]: "read" }), { after: feed[0].id, count: expected.length });
      expect(result.error, JSON.stringify(result.error)).toBeUndefined();
      expect(result.events!.map((event) => [event.type, event.id])).toEqual(expected.map((event) => [event.type, event.id]));
    },
  );

  it.each(HISTORY_TRANSPORTS)("$transport: a type the key may not read is a 403 naming its permission; events:read alone reads nothing", async ({ read }) => {
    const key = keyWith({ events: "read", deposits: "read" });
    expect((await read(server, key, { after: feed[0].id, types: ["deposit.created", "user.created"], count: 0 })).error).toMatchObject({
      code: "FORBIDDEN",
      message: "This API key lacks the users:read permission",
    });
    const bare = keyWith({ events: "read" });
    expect((await read(server, bare, { after: feed[0].id, count: 0 })).error).toMatchObject({ code: "FORBIDDEN", message: "This API key lacks the users:read permission" });
  });

  it.each(DEPOSIT_SUBSCRIPTION_TRANSPORTS)("$transport: deposits:read replays the deposits; a key without it is refused", async ({ read }) => {
    const deposits = feed.filter((event) => EVENT_RESOURCES[event.type as EventType] === "deposits");
    const result = await read(server, keyWith({ deposits: "read" }), { after: deposits[0].id, count: deposits.length - 1 });
    expect(result.events?.map((event) => event.id)).toEqual(deposits.slice(1).map((event) => event.id));
    expect((await read(server, keyWith({ events: "read", users: "read" }), { after: deposits[0].id, count: 0 })).error).toMatchObject({ code: "FORBIDDEN" });
  });

  it.each(FAMILIES)("one $resource event by id: 403 naming $resource:read without it, the event with it (REST and GraphQL)", async ({ resource, types }) => {
    const event = feed.find((candidate) => (types as readonly string[]).includes(candidate.type))!;
    const byId = async (key: string) => ({
      rest: await rest(server, "GET", `/v1/events/${event.id}`, { headers: { "x-api-key": key } }),
      graph: await gql(server, `query ($id: ID!) { event(id: $id) { id type } }`, { id: event.id }, { "x-api-key": key }),
    });
    const other = FAMILIES.find((family) => family.resource !== resource)!.resource;
    const refused = await byId(keyWith({ events: "read", [other]: "read" }));
    expect(refused.rest.status).toBe(403);
    expect(refused.rest.body.error).toBe(`This API key lacks the ${resource}:read permission`);
    expect(refused.graph.body.errors?.[0]).toMatchObject({ message: `This API key lacks the ${resource}:read permission`, extensions: { code: "FORBIDDEN" } });
    const allowed = await byId(keyWith({ events: "read", [resource]: "read" }));
    expect(allowed.rest.body).toMatchObject({ id: event.id, type: event.type });
    expect(allowed.graph.body.data?.event).toEqual({ id: event.id, type: event.type });
  });
});

describe("webhook endpoints of a restricted key", () => {
  const CREATE = `mutation ($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { id events } }`;
  const TRANSPORTS = [
    {
      transport: "REST",
      create: async (key: string, events?: string[]) => {
        const res = await rest(server, "POST", "/v1/webhook-endpoints", { headers: { "x-api-key": key }, body: { url: "http://127.0.0.1:9/x", events } });
        if (res.status === 201) return { events: res.body.events as string[] | null };
        expect(res.status).toBe(403);
        return { code: res.body.code as string, error: res.body.error as string };
      },
    },
    {
      transport: "GraphQL",
      create: async (key: string, events?: string[]) => {
        const res = await gql(server, CREATE, { input: { url: "http://127.0.0.1:9/x", events } }, { "x-api-key": key });
        const [error] = res.body.errors ?? [];
        return error ? { code: error.extensions?.code, error: error.message } : { events: res.body.data.createWebhookEndpoint.events as string[] | null };
      },
    },
  ];
  const CASES: [string, Grants, EventType[] | undefined, string | null][] = [
    ["the types it may read", { events: "write", users: "read" }, ["user.created", "user.updated"], null],
    ["a type it may not read", { events: "write", users: "read" }, ["user.created", "withdrawal.created"], "withdrawals:read"],
    ["card authorizations without cards:read", { events: "write", accounts: "read" }, ["card.authorization.created"], "cards:read"],
    ["virtual accounts without accounts:read", { events: "write", cards: "read" }, ["virtual_account.created"], "accounts:read"],
    ["every type (no list) without every read", { events: "write", users: "read", deposits: "read" }, undefined, "accounts:read"],
    [
      "every type (no list) with every read",
      { events: "write", users: "read", accounts: "read", deposits: "read", withdrawals: "read", conversions: "read", cards: "read", api_keys: "read" },
      undefined,
      null,
    ],
  ];

  it.each(TRANSPORTS.flatMap((transport) => CASES.map(([what, grants, events, missing]) => ({ ...transport, what, grants, events, missing }))))(
    "$transport: $what",
    async ({ create, grants, events, missing }) => {
      const result = await create(keyWith(grants), events);
      if (missing) expect(result).toEqual({ code: "FORBIDDEN", error: `This API key lacks the ${missing} permission` });
      else expect(result).toEqual({ events: events ?? null });
    },
  );

  it("resends only an event the key may read (REST and GraphQL)", async () => {
    const key = keyWith({ events: "write", users: "read" });
    const withdrawal = feed.find((event) => event.type === "withdrawal.created")!;
    const refused = await rest(server, "POST", `/v1/events/${withdrawal.id}/resend`, { headers: { "x-api-key": key }, body: {} });
    expect([refused.status, refused.body.error]).toEqual([403, "This API key lacks the withdrawals:read permission"]);
    const graph = await gql(server, `mutation ($id: ID!) { resendEvent(id: $id) { id } }`, { id: withdrawal.id }, { "x-api-key": key });
    expect(graph.body.errors?.[0].message).toBe("This API key lacks the withdrawals:read permission");
  });
});
