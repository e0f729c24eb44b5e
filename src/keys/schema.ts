import { builder } from "../graphql/builder.js";
import { clientIdOf } from "../graphql/context.js";
import { MAX_ALLOWED_IPS } from "./allowed-ips.js";
import { shownAllowedIps } from "./representation.js";
import { MAX_KEY_LIFETIME_HOURS, MAX_LISTED_KEYS, MAX_ROLL_GRACE_HOURS, type ApiKeyService } from "./service.js";

const ALLOWED_IPS_DESCRIPTION = "The IPv4/IPv6 addresses and CIDR ranges the key may be used from; null: anywhere.";
const EXPIRES_AT_DESCRIPTION = "When the key stops working by itself (rolled, or created to expire); null: never.";

builder.prismaObject("ApiKey", {
  fields: (t) => ({
    id: t.exposeID("id"),
    prefix: t.exposeString("prefix"),
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
    key: t.exposeString("key"),
    prefix: t.exposeString("prefix"),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    expiresAt: t.expose("expiresAt", { type: "DateTime", nullable: true, description: EXPIRES_AT_DESCRIPTION }),
    allowedIps: t.stringList({ nullable: true, description: ALLOWED_IPS_DESCRIPTION, resolve: (key) => shownAllowedIps(key.allowedIps) }),
  }),
});

const CreateApiKeyInput = builder.inputType("CreateApiKeyInput", {
  fields: (t) => ({
    expiresInHours: t.float({ description: `Hours (fractions allowed) until the key stops working, more than 0 and at most ${MAX_KEY_LIFETIME_HOURS}; omitted or null: never.` }),
    allowedIps: t.stringList({ description: `IPv4/IPv6 addresses or CIDR ranges (1 to ${MAX_ALLOWED_IPS}) the key may be used from; omitted or null: anywhere.` }),
  }),
});

builder.queryFields((t) => ({
  apiKeys: t.prismaField({
    type: ["ApiKey"],
    description: "The calling client's API keys, oldest first: every active one (at most 100) and the 100 that ended (revoked or expired) most recently.",
    extensions: { maxListSize: MAX_LISTED_KEYS },
    resolve: async (_query, _root, _args, ctx) => ctx.services.keys.list(await clientIdOf(ctx)),
  }),
}));

builder.mutationFields((t) => ({
  createApiKey: t.field({
    type: CreatedApiKey,
    args: { input: t.arg({ type: CreateApiKeyInput }) },
    resolve: async (_root, args, ctx) => ctx.services.keys.create(await clientIdOf(ctx), args.input ?? {}),
  }),
  rollApiKey: t.field({
    type: CreatedApiKey,
    description:
      `A new key (shown once) with the same attributes. The rolled key keeps working for expiresInHours (0 to ${MAX_ROLL_GRACE_HOURS}, ` +
      "fractions allowed; default 0: it stops at once), then is refused on every instance. A revoked or expired key cannot be rolled (CONFLICT).",
    args: { id: t.arg.id({ required: true }), expiresInHours: t.arg.float() },
    resolve: async (_root, args, ctx) => ctx.services.keys.roll(await clientIdOf(ctx), args.id, { expiresInHours: args.expiresInHours }),
  }),
  revokeApiKey: t.prismaField({
    type: "ApiKey",
    description: "Revokes a key at once, on every instance. Idempotent.",
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_query, _root, args, ctx) => ctx.services.keys.revoke(await clientIdOf(ctx), args.id),
  }),
}));
