import { builder } from "../graphql/builder.js";
import { clientIdOf } from "../graphql/context.js";
import { lastEventIdOf, withSseCursor } from "../events/sse.js";
import { DEPOSIT_EVENT_TYPES, type ClientEvent } from "../events/types.js";
import "./schema.js";

builder.prismaObjectFields("Deposit", (t) => ({
  eventCursor: t.string({
    nullable: true,
    description: "In depositUpdated payloads: the id of the log event this payload reports; pass it as `after` to resume from there. Null elsewhere.",
    resolve: (deposit) => (deposit as typeof deposit & { eventCursor?: string }).eventCursor ?? null,
  }),
}));

builder.subscriptionField("depositUpdated", (t) =>
  t.prismaField({
    permission: "deposits:read",
    type: "Deposit",
    description:
      "Every creation and status change of the calling client's deposits (of one user when userId is given), read from the event log. " +
      "With `after` (an eventCursor; over SSE also the Last-Event-ID header) the changes since that event are replayed first, then it continues live, without gap or repeat.",
    args: { userId: t.arg.id(), after: t.arg.id() },
    subscribe: async (_root, args, ctx) => {
      const caller = await ctx.client();
      // deposits:read suffices, as for `user(id) { deposits }` and GET /v1/transactions/deposits/{userId}: the user is
      // named only to reach its deposits, and nothing of it is read but that it is one of the caller's (else NOT_FOUND).
      const userId = args.userId == null ? undefined : (await ctx.services.users.get(caller.clientId, args.userId, { select: { id: true } })).id;
      return withSseCursor(ctx, ctx.services.clientEvents.tail(caller, { userId, types: DEPOSIT_EVENT_TYPES }, args.after ?? lastEventIdOf(ctx)));
    },
    // The deposit as committed, with the selection's relations, in the state this event reports.
    resolve: async (query, event: ClientEvent, _args, ctx) => {
      const { id, status, updatedAt } = event.data.object as { id: string; status: string; updatedAt: string };
      const deposit = await ctx.services.deposits.forEvent(await clientIdOf(ctx), id, status, query);
      return { ...deposit, status, updatedAt: new Date(updatedAt), failureReason: status === "FAILED" ? deposit.failureReason : null, eventCursor: event.id };
    },
  }),
);
