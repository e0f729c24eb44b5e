import { filter, pipe } from "graphql-yoga";
import { builder } from "../graphql/builder.js";
import { clientIdOf } from "../graphql/context.js";
import "./schema.js";

builder.subscriptionField("depositUpdated", (t) =>
  t.prismaField({
    type: "Deposit",
    description: "Every creation and status change of the calling client's deposits (of one user when userId is given).",
    args: { userId: t.arg.id() },
    subscribe: async (_root, args, ctx) => {
      const clientId = await clientIdOf(ctx);
      const userId = args.userId == null ? undefined : (await ctx.services.users.get(clientId, args.userId)).id;
      return pipe(
        ctx.services.events.subscribe("deposit"),
        filter((event) => event.clientId === clientId && (userId === undefined || event.userId === userId)),
      );
    },
    // The event only names the deposit; the payload is the row as committed, with the selection's relations.
    resolve: (query, event, _args, ctx) => ctx.services.deposits.get(event.clientId, event.depositId, query),
  }),
);
