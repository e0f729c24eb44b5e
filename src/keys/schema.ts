import { builder } from "../graphql/builder.js";
import { clientIdOf } from "../graphql/context.js";
import { MAX_LISTED_KEYS } from "./service.js";

builder.prismaObject("ApiKey", {
  fields: (t) => ({
    id: t.exposeID("id"),
    prefix: t.exposeString("prefix"),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    lastUsedAt: t.expose("lastUsedAt", { type: "DateTime", nullable: true }),
    revokedAt: t.expose("revokedAt", { type: "DateTime", nullable: true }),
  }),
});

const CreatedApiKey = builder.simpleObject("CreatedApiKey", {
  description: "A new key. `key` is the full secret and is shown only here.",
  fields: (t) => ({
    id: t.id(),
    key: t.string(),
    prefix: t.string(),
    createdAt: t.field({ type: "DateTime" }),
  }),
});

builder.queryFields((t) => ({
  apiKeys: t.prismaField({
    type: ["ApiKey"],
    description: "The calling client's API keys, oldest first: every active one (at most 100) and the 100 most recently revoked.",
    extensions: { maxListSize: MAX_LISTED_KEYS },
    resolve: async (_query, _root, _args, ctx) => ctx.services.keys.list(await clientIdOf(ctx)),
  }),
}));

builder.mutationFields((t) => ({
  createApiKey: t.field({
    type: CreatedApiKey,
    resolve: async (_root, _args, ctx) => ctx.services.keys.create(await clientIdOf(ctx)),
  }),
  revokeApiKey: t.prismaField({
    type: "ApiKey",
    description: "Revokes a key at once, on every instance. Idempotent.",
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_query, _root, args, ctx) => ctx.services.keys.revoke(await clientIdOf(ctx), args.id),
  }),
}));
