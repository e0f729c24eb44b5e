import { z } from "zod";
import { graphql } from "../../graphql/typed.js";
import { EVENT_TYPES } from "../../events/types.js";
import { doc, named } from "../docs.js";
import { examples } from "../examples.js";
import { integer, route } from "../route.js";

const EventFields = graphql(`fragment EventFields on Event { id type createdAt livemode data }`);
export const Event = named("Event", z.object({
  id: z.string().describe("evt_…, opaque (pass it as `after` to read on from it)"),
  type: z.enum(EVENT_TYPES),
  createdAt: doc.timestamp,
  livemode: z.boolean().describe("whether it happened in live mode; its object carries the same"),
  data: z.object({ object: z.record(z.string(), z.unknown()).describe("the resource as its REST path shows it") }),
}));

export const eventRoutes = [
  route({
    method: "GET",
    path: "/v1/events",
    operation: graphql(`query ListEvents($after: ID, $first: Int, $types: [String!]) {
      events(after: $after, first: $first, types: $types) { edges { node { ...EventFields } } pageInfo { hasNextPage } }
    }`, [EventFields]),
    variables: ({ query }) => ({ after: query.after, first: integer(query.limit), types: query.type === undefined ? undefined : [query.type].flat() }),
    result: ({ events }) => ({ data: events.edges.map((edge) => edge.node), hasMore: events.pageInfo.hasNextPage }),
    docs: {
      summary: "The client's events, oldest first after a cursor",
      query: z.object({
        after: z.string().optional().describe("an event id: only later events"),
        limit: z.int().min(1).max(100).optional().describe("1–100, default 20"),
        type: z.enum(EVENT_TYPES).optional().describe("only this type"),
      }),
      response: z.object({ data: z.array(Event), hasMore: z.boolean() }),
      example: { response: { data: [examples.event], hasMore: false } },
    },
  }),
  route({
    method: "GET",
    path: "/v1/events/cursor",
    operation: graphql(`query GetEventCursor { eventCursor }`),
    variables: () => ({}),
    result: (data) => ({ cursor: data.eventCursor }),
    docs: {
      summary: "The newest event position you can see, to subscribe from without missing anything",
      description:
        "Take the cursor before subscribing (`events` or `depositUpdated`, over websockets or SSE) and pass it as `after`: every event " +
        "written once this has answered is replayed, even when the subscription reaches the server after your next request.",
      response: z.object({ cursor: z.string().nullable().describe("an event id, or null when you have no event yet") }),
      example: { response: { cursor: examples.event.id } },
    },
  }),
  route({
    method: "GET",
    path: "/v1/events/:id",
    operation: graphql(`query GetEvent($id: ID!) { event(id: $id) { ...EventFields } }`, [EventFields]),
    variables: ({ params }) => ({ id: params.id }),
    result: (data) => data.event,
    docs: { summary: "One event", params: { id: "the event's id" }, response: Event, errors: ["NOT_FOUND"], example: { response: examples.event } },
  }),
];
