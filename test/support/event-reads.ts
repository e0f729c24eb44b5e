import type { FeedEvent } from "./events.js";
import { rest } from "./http.js";
import type { TestServer } from "./server.js";
import { subscribeSse, subscribeWs, type Subscriber, type SubscriptionResult } from "./subscriptions.js";

/** What reading events gave: the events (oldest first), or the refusal (`param` when it names one). */
export type EventRead = { events: FeedEvent[]; error?: undefined } | { events?: undefined; error: { code: string; message: string; param?: string } };

export type EventQuery = {
  after?: string;
  types?: string[];
  /** Sent as the SSE Last-Event-ID header (SSE transports only). */
  lastEventId?: string;
  /** A subscription is read until this many events came (then checked quiet for a moment). */
  count: number;
};

/** One way of reading a client's events, with an API key. */
export type EventTransport = { transport: string; read(server: TestServer, apiKey: string, query: EventQuery): Promise<EventRead> };

const EVENTS_QUERY = `query ($after: ID, $types: [String!]) { events(after: $after, first: 100, types: $types) { edges { node { id type createdAt data } } } }`;
const EVENTS_SUBSCRIPTION = `subscription ($after: ID, $types: [String!]) { events(after: $after, types: $types) { id type createdAt data } }`;
const DEPOSIT_SUBSCRIPTION = `subscription ($after: ID) { depositUpdated(after: $after) { id status eventCursor } }`;

type GraphqlError = { message: string; extensions?: { code?: string; param?: string } };
const graphqlRefusal = (errors: GraphqlError[]): EventRead => ({
  error: { code: errors[0].extensions?.code ?? "", message: errors[0].message, param: errors[0].extensions?.param },
});

async function overHttp(server: TestServer, apiKey: string, method: "POST" | "GET", query: EventQuery): Promise<EventRead> {
  const variables = { after: query.after, types: query.types };
  const headers = { "x-api-key": apiKey, accept: "application/graphql-response+json" };
  const res =
    method === "POST"
      ? await rest(server, "POST", "/graphql", { headers, body: { query: EVENTS_QUERY, variables } })
      : await rest(server, "GET", `/graphql?${new URLSearchParams({ query: EVENTS_QUERY, variables: JSON.stringify(variables) })}`, { headers });
  if (res.body.errors) return graphqlRefusal(res.body.errors);
  return { events: res.body.data.events.edges.map((edge: { node: FeedEvent }) => edge.node) };
}

/** Takes `count` results (or the refusal that ends the subscription), then checks nothing more comes soon. */
async function drain(subscriber: Subscriber, count: number, payload: (result: SubscriptionResult) => FeedEvent): Promise<EventRead> {
  const ended = subscriber.ended.then((reason) => ({ ended: reason }));
  const events: FeedEvent[] = [];
  try {
    for (;;) {
      const waiting = events.length < count;
      const next = await Promise.race([subscriber.take(waiting ? 10_000 : 400).catch((err: unknown) => (waiting ? Promise.reject(err) : undefined)), ended]);
      if (next === undefined) return { events };
      if ("ended" in next) {
        const errors = (Array.isArray(next.ended) ? next.ended : []) as GraphqlError[];
        if (errors.length) return graphqlRefusal(errors);
        if (waiting) throw new Error(`the subscription ended after ${events.length} of ${count} events: ${JSON.stringify(next.ended)}`);
        return { events };
      }
      if (next.errors?.length) return graphqlRefusal(next.errors as GraphqlError[]);
      events.push(payload(next));
    }
  } finally {
    subscriber.close();
  }
}

const asEvent = (result: SubscriptionResult) => result.data.events as FeedEvent;
/** depositUpdated shows the deposit; as an event: its cursor, and the deposit as its object. */
const depositAsEvent = (result: SubscriptionResult) => {
  const { eventCursor, ...deposit } = result.data.depositUpdated as { eventCursor: string; id: string; status: string };
  return { id: eventCursor, type: "deposit", createdAt: "", data: { object: deposit } };
};

async function overSse(server: TestServer, apiKey: string, document: string, query: EventQuery, payload: (result: SubscriptionResult) => FeedEvent): Promise<EventRead> {
  const headers: Record<string, string> = { "x-api-key": apiKey, ...(query.lastEventId ? { "last-event-id": query.lastEventId } : {}) };
  // A refusal comes as the stream's one result (whatever the HTTP status).
  return drain(await subscribeSse(server.url, headers, document, { after: query.after, types: query.types }), query.count, payload);
}

const overWs = (server: TestServer, apiKey: string, document: string, query: EventQuery, payload: (result: SubscriptionResult) => FeedEvent) =>
  drain(subscribeWs(server.url, { "x-api-key": apiKey }, document, { after: query.after, types: query.types }), query.count, payload);

/** The feed: REST (the contract's `{error}`, whose text starts with the parameter it is about), GraphQL over POST and GET. */
export const FEED_TRANSPORTS: EventTransport[] = [
  {
    transport: "REST",
    read: async (server, apiKey, query) => {
      const params = new URLSearchParams({ limit: "100" });
      if (query.after !== undefined) params.set("after", query.after);
      for (const type of query.types ?? []) params.append("type", type);
      const res = await rest(server, "GET", `/v1/events?${params}`, { headers: { "x-api-key": apiKey } });
      if (res.status !== 200) return { error: { code: res.body.code, message: res.body.error, param: /^(\w+)\b/.exec(res.body.error)?.[1] } };
      return { events: res.body.data };
    },
  },
  { transport: "GraphQL POST", read: (server, apiKey, query) => overHttp(server, apiKey, "POST", query) },
  { transport: "GraphQL GET", read: (server, apiKey, query) => overHttp(server, apiKey, "GET", query) },
];

/** The `events` subscription: graphql-ws and SSE (`after`, or the Last-Event-ID header when `lastEventId` is given). */
export const EVENTS_SUBSCRIPTION_TRANSPORTS: EventTransport[] = [
  { transport: "events over graphql-ws", read: (server, apiKey, query) => overWs(server, apiKey, EVENTS_SUBSCRIPTION, query, asEvent) },
  { transport: "events over SSE", read: (server, apiKey, query) => overSse(server, apiKey, EVENTS_SUBSCRIPTION, query, asEvent) },
];

/** `depositUpdated` (deposit events only; `types` does not apply): graphql-ws and SSE. */
export const DEPOSIT_SUBSCRIPTION_TRANSPORTS: EventTransport[] = [
  { transport: "depositUpdated over graphql-ws", read: (server, apiKey, query) => overWs(server, apiKey, DEPOSIT_SUBSCRIPTION, query, depositAsEvent) },
  { transport: "depositUpdated over SSE", read: (server, apiKey, query) => overSse(server, apiKey, DEPOSIT_SUBSCRIPTION, query, depositAsEvent) },
];
