import { ACCESS_LEVELS, grantList, grantMap, RESOURCES, storedPermissions } from "../auth/permissions.js";
import { builder } from "../graphql/builder.js";
import { clientIdOf } from "../graphql/context.js";
import { MAX_LISTED_KEYS } from "./service.js";

/** GraphQL enum values for lower-case codes: `api_keys` is API_KEYS, and resolvers see the code. */
export const upperCased = <T extends string>(values: readonly T[]) => Object.fromEntries(values.map((value) => [value.toUpperCase(), { value }])) as Record<string, { value: T }>;

const ApiKeyResource = builder.enumType("ApiKeyResource", {
  description: "What a restricted key may be given access to. ACCOUNTS: virtual and USDC accounts, balances; EVENTS: the event feed and webhook endpoints.",
  values: upperCased(RESOURCES),
});
const ApiKeyAccess = builder.enumType("ApiKeyAccess", { description: "WRITE implies READ.", values: upperCased(ACCESS_LEVELS) });

const ApiKeyPermission = builder.simpleObject("ApiKeyPermission", {
  fields: (t) => ({ resource: t.field({ type: ApiKeyResource }), access: t.field({ type: ApiKeyAccess }) }),
});
const ApiKeyPermissionInput = builder.inputType("ApiKeyPermissionInput", {
  fields: (t) => ({ resource: t.field({ type: ApiKeyResource, required: true }), access: t.field({ type: ApiKeyAccess, required: true }) }),
});
const CreateApiKeyInput = builder.inputType("CreateApiKeyInput", {
  fields: (t) => ({
    name: t.string({ description: "A label for lists (1–100 characters)." }),
    permissions: t.field({ type: [ApiKeyPermissionInput], description: "Omit for a full key. A restricted key can only create keys with no more than it has." }),
  }),
});

builder.prismaObject("ApiKey", {
  fields: (t) => ({
    id: t.exposeID("id"),
    prefix: t.exposeString("prefix"),
    name: t.exposeString("name", { nullable: true }),
    permissions: t.field({
      type: [ApiKeyPermission],
      nullable: true,
      description: "What the key may do; null for a full key.",
      extensions: { maxListSize: RESOURCES.length },
      resolve: (key) => grantList(storedPermissions(key.permissions)),
    }),
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
    name: t.string({ nullable: true }),
    permissions: t.field({ type: [ApiKeyPermission], nullable: true, description: "What the key may do; null for a full key.", extensions: { maxListSize: RESOURCES.length } }),
    createdAt: t.field({ type: "DateTime" }),
  }),
});

builder.queryFields((t) => ({
  apiKeys: t.prismaField({
    permission: "api_keys:read",
    type: ["ApiKey"],
    description: "The calling client's API keys, oldest first: every active one (at most 100) and the 100 most recently revoked.",
    extensions: { maxListSize: MAX_LISTED_KEYS },
    resolve: async (_query, _root, _args, ctx) => ctx.services.keys.list(await clientIdOf(ctx)),
  }),
}));

builder.mutationFields((t) => ({
  createApiKey: t.field({
    permission: "api_keys:write",
    type: CreatedApiKey,
    args: { input: t.arg({ type: CreateApiKeyInput }) },
    resolve: async (_root, { input }, ctx) => {
      const caller = await ctx.client();
      const permissions = input?.permissions ? grantMap(input.permissions) : null;
      const created = await ctx.services.keys.create(caller.clientId, { name: input?.name, permissions }, caller.permissions);
      return { ...created, permissions: grantList(created.permissions) };
    },
  }),
  revokeApiKey: t.prismaField({
    permission: "api_keys:write",
    type: "ApiKey",
    description: "Revokes a key at once, on every instance. Idempotent.",
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_query, _root, args, ctx) => ctx.services.keys.revoke(await clientIdOf(ctx), args.id),
  }),
}));
