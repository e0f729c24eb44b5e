import { builder } from "../graphql/builder.js";
import { clientIdOf } from "../graphql/context.js";
import { carriesExactNumbers } from "../graphql/exact-numbers.js";
import { parseEventTypes } from "./service.js";
import { lastEventIdOf, withSseCursor } from "./sse.js";
import type { ClientEvent } from "./types.js";
import { EVENT_TYPES } from "./types.js";

export const EventRef = builder.objectRef<ClientEvent>("Event").implement({
  description: `Something that happened to one of the client's resources. Types: ${EVENT_TYPES.join(", ")}.`,
  fields: (t) => ({
    id: t.exposeID("id", { description: "evt_…, opaque: the feed's order is its own (ids do not sort); pass one as `after` to read on from it" }),
    type: t.exposeString("type"),
    createdAt: t.field({ type: "DateTime", resolve: (event) => event.createdAt }),
    livemode: t.exposeBoolean("livemode", { description: "Whether it happened in live mode (SPEC §15); its object carries the same" }),
    data: t.field({
      type: "JSON",
      description: "{object}: the resource as REST shows it (money as JSON numbers, written with every digit as REST writes them)",
      resolve: (event, _args, ctx) => {
        carriesExactNumbers(ctx);
        return event.data;
      },
    }),
  }),
});

const EventEdge = builder.objectRef<ClientEvent>("EventEdge").implement({
  fields: (t) => ({
    cursor: t.exposeString("id"),
    node: t.field({ type: EventRef, resolve: (event) => event }),
  }),
});

const EventConnection = builder.objectRef<{ events: ClientEvent[]; hasMore: boolean }>("EventConnection").implement({
  fields: (t) => ({
    edges: t.field({ type: [EventEdge], resolve: (page) => page.events }),
    pageInfo: t.field({
      type: builder.pageInfoRef(),
      description: "endCursor is the `after` of the next page (null on an empty page: keep your cursor). The feed pages forward only.",
      resolve: (page) => ({
        hasNextPage: page.hasMore,
        hasPreviousPage: false,
        startCursor: page.events[0]?.id ?? null,
        endCursor: page.events.at(-1)?.id ?? null,
      }),
    }),
  }),
});

builder.queryFields((t) => ({
  events: t.field({
    permission: "events:read",
    type: EventConnection,
    description:
      "The client's events, oldest first after the cursor `after` (an event id); first 1–100 (default 20); types filters. " +
      "A restricted key sees only the types whose resource it may read (user.* needs users:read, deposit.* deposits:read, …).",
    args: { after: t.arg.id(), first: t.arg.int(), types: t.arg.stringList() },
    resolve: async (_root, args, ctx) => ctx.services.clientEvents.list(await ctx.client(), args),
  }),
  eventCursor: t.field({
    permission: "events:read",
    type: "ID",
    nullable: true,
    description:
      "The id of the newest event you can see now (null when there is none). Take it before subscribing and pass it as `after` " +
      "(events, depositUpdated): every event from then on is replayed, however late the subscription reaches the server.",
    resolve: async (_root, _args, ctx) => ctx.services.clientEvents.cursor(await clientIdOf(ctx)),
  }),
  event: t.field({
    permission: "events:read",
    type: EventRef,
    nullable: true,
    description: "One of the client's events; NOT_FOUND otherwise.",
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => ctx.services.clientEvents.get(await ctx.client(), args.id),
  }),
}));

builder.subscriptionField("events", (t) =>
  t.field({
    permission: "events:read",
    type: EventRef,
    description:
      "The client's events as they are written (of the given types; all when omitted), read from the log: with `after` (over SSE also Last-Event-ID) " +
      "the events after it first, then live, without gap or repeat. Deposit events arrive at once, others within about a second.",
    args: { types: t.arg.stringList(), after: t.arg.id() },
    subscribe: async (_root, args, ctx) => {
      const types = parseEventTypes(args.types, "types");
      return withSseCursor(ctx, ctx.services.clientEvents.tail(await ctx.client(), { types }, args.after ?? lastEventIdOf(ctx)));
    },
    resolve: (event) => event,
  }),
);
