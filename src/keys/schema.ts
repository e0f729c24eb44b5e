import { ACCESS_LEVELS, grantList, grantMap, RESOURCES, storedPermissions } from "../caller/permissions.js";
import { builder } from "../graphql/builder.js";
import { LIVEMODE_FIELD } from "../graphql/livemode.js";
import { clientIdOf } from "../graphql/context.js";
import { MODES } from "../modes.js";
import { MAX_ALLOWED_IPS } from "../caller/allowed-ips.js";
import { authorityOf } from "./authority.js";
import { modeOfKey, tenantForNewKey } from "./key-mode.js";
import { shownAllowedIps } from "./representation.js";
import { MAX_KEY_LIFETIME_HOURS, MAX_LISTED_KEYS, MAX_ROLL_GRACE_HOURS, type ApiKeyService } from "./service.js";

const ALLOWED_IPS_DESCRIPTION = "The IPv4/IPv6 addresses and CIDR ranges the key may be used from; null: anywhere.";
const EXPIRES_AT_DESCRIPTION = "When the key stops working by itself (rolled, or created to expire); null: never.";
const PERMISSIONS_DESCRIPTION = "What the key may do; null for a full key.";

/** GraphQL enum values for lower-case codes: `api_keys` is API_KEYS, and resolvers see the code. */
export const upperCased = <T extends string>(values: readonly T[]) => Object.fromEntries(values.map((value) => [value.toUpperCase(), { value }])) as Record<string, { value: T }>;

const ApiKeyResource = builder.enumType("ApiKeyResource", {
  description: "What a restricted key may be given access to. ACCOUNTS: virtual and USDC accounts, balances; EVENTS: the event feed and webhook endpoints.",
  values: upperCased(RESOURCES),
});
const ApiKeyAccess = builder.enumType("ApiKeyAccess", { description: "WRITE implies READ.", values: upperCased(ACCESS_LEVELS) });

const ApiKeyMode = builder.enumType("ApiKeyMode", {
  description: "The mode a key acts in (SPEC §15), shown by its prefix: fpk_test_… or fpk_live_… (keys made before modes, fpk_ and 12 hex digits, are test).",
  values: MODES,
});
/** A key's mode, the same on a listed key and a new one. */
const MODE_FIELD = { type: ApiKeyMode, resolve: (key: { prefix: string }) => modeOfKey(key.prefix) };
/** A key's own mode, not the caller's: a session may create a key of the other mode. */
const KEY_LIVEMODE_FIELD = { description: LIVEMODE_FIELD.description, resolve: (key: { prefix: string }) => modeOfKey(key.prefix) === "live" };

const ApiKeyPermission = builder.simpleObject("ApiKeyPermission", {
  fields: (t) => ({ resource: t.field({ type: ApiKeyResource }), access: t.field({ type: ApiKeyAccess }) }),
});
const ApiKeyPermissionInput = builder.inputType("ApiKeyPermissionInput", {
  fields: (t) => ({ resource: t.field({ type: ApiKeyResource, required: true }), access: t.field({ type: ApiKeyAccess, required: true }) }),
});

/** A key's grants, the same on a listed key and a new one. */
const PERMISSIONS_FIELD = { nullable: true, description: PERMISSIONS_DESCRIPTION, extensions: { maxListSize: RESOURCES.length } } as const;
const grantsOf = (key: { permissions: unknown }) => grantList(storedPermissions(key.permissions));

builder.prismaObject("ApiKey", {
  fields: (t) => ({
    id: t.exposeID("id"),
    livemode: t.boolean(KEY_LIVEMODE_FIELD),
    prefix: t.exposeString("prefix"),
    mode: t.field(MODE_FIELD),
    name: t.exposeString("name", { nullable: true }),
    permissions: t.field({ type: [ApiKeyPermission], ...PERMISSIONS_FIELD, resolve: grantsOf }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    lastUsedAt: t.expose("lastUsedAt", { type: "DateTime", nullable: true, description: "Updated at most once a minute." }),
    revokedAt: t.expose("revokedAt", { type: "DateTime", nullable: true }),
    expiresAt: t.expose("expiresAt", { type: "DateTime", nullable: true, description: EXPIRES_AT_DESCRIPTION }),
    allowedIps: t.stringList({ nullable: true, description: ALLOWED_IPS_DESCRIPTION, resolve: (key) => shownAllowedIps(key.allowedIps) }),
  }),
});

type Created = Awaited<ReturnType<ApiKeyService["create"]>>;
const CreatedApiKey = builder.objectRef<Created>("CreatedApiKey").implement({
  description: "A new key. `key` is the full secret and is shown only here.",
  fields: (t) => ({
    id: t.exposeID("id"),
    livemode: t.boolean(KEY_LIVEMODE_FIELD),
    key: t.exposeString("key"),
    prefix: t.exposeString("prefix"),
    mode: t.field(MODE_FIELD),
    name: t.exposeString("name", { nullable: true }),
    permissions: t.field({ type: [ApiKeyPermission], ...PERMISSIONS_FIELD, resolve: grantsOf }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    expiresAt: t.expose("expiresAt", { type: "DateTime", nullable: true, description: EXPIRES_AT_DESCRIPTION }),
    allowedIps: t.stringList({ nullable: true, description: ALLOWED_IPS_DESCRIPTION, resolve: (key) => shownAllowedIps(key.allowedIps) }),
  }),
});

const CreateApiKeyInput = builder.inputType("CreateApiKeyInput", {
  fields: (t) => ({
    name: t.string({ description: "A label for lists (1–100 characters)." }),
    mode: t.field({
      type: ApiKeyMode,
      description: "The mode of the new key; omitted or null: the caller's. Only a session may create a key of the other mode (in the business's tenant of that mode); an API key asking for it is FORBIDDEN.",
    }),
    permissions: t.field({ type: [ApiKeyPermissionInput], description: "Omit for a full key. A restricted key can only create keys with no more than it has." }),
    expiresInHours: t.float({
      description: `Hours (fractions allowed) until the key stops working, more than 0 and at most ${MAX_KEY_LIFETIME_HOURS}; omitted or null: never, or when the creating key expires. A key that expires cannot create one that outlives it.`,
    }),
    allowedIps: t.stringList({
      description: `IPv4/IPv6 addresses or CIDR ranges (1 to ${MAX_ALLOWED_IPS}) the key may be used from; omitted or null: anywhere, or the creating key's own. A key with an allowlist can only create keys within it.`,
    }),
  }),
});

builder.queryFields((t) => ({
  apiKeys: t.prismaField({
    permission: "api_keys:read",
    type: ["ApiKey"],
    description: "The calling client's API keys, oldest first: every active one (at most 100) and the 100 that ended (revoked or expired) most recently.",
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
      const { mode, ...attributes } = input ?? {};
      const permissions = attributes.permissions ? grantMap(attributes.permissions) : null;
      const clientId = await tenantForNewKey(ctx.prisma, caller, mode);
      return ctx.services.keys.create(clientId, { ...attributes, permissions }, authorityOf(caller));
    },
  }),
  rollApiKey: t.field({
    permission: "api_keys:write",
    type: CreatedApiKey,
    description:
      `A new key (shown once) with the same attributes. The rolled key keeps working for expiresInHours (0 to ${MAX_ROLL_GRACE_HOURS}, ` +
      "fractions allowed; default 0: it stops at once), then is refused on every instance. A revoked or expired key cannot be rolled (CONFLICT).",
    args: { id: t.arg.id({ required: true }), expiresInHours: t.arg.float() },
    resolve: async (_root, args, ctx) => {
      const caller = await ctx.client();
      return ctx.services.keys.roll(caller.clientId, args.id, { expiresInHours: args.expiresInHours }, authorityOf(caller));
    },
  }),
  revokeApiKey: t.prismaField({
    permission: "api_keys:write",
    type: "ApiKey",
    description: "Revokes a key at once, on every instance. Idempotent.",
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_query, _root, args, ctx) => {
      const caller = await ctx.client();
      return ctx.services.keys.revoke(caller.clientId, args.id, authorityOf(caller));
    },
  }),
}));
