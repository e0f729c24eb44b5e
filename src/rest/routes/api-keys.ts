import { z } from "zod";
import { ACCESS_LEVELS, RESOURCES } from "../../caller/permissions.js";
import { MODES } from "../../modes.js";
import { graphql } from "../../graphql/typed.js";
import { ApiKeyFields, apiKeyBody, CreatedApiKeyFields, permissionsInput } from "../../keys/representation.js";
import { CreateKeyInput, RollKeyInput } from "../../keys/service.js";
import { doc, named } from "../docs.js";
import { examples } from "../examples.js";
import { route } from "../route.js";

const Permissions = named(
  "ApiKeyPermissions",
  z
    .partialRecord(z.enum(RESOURCES), z.enum(ACCESS_LEVELS))
    .nullable()
    .describe("resource → read | write (write implies read); null for a full key. accounts: virtual and USDC accounts, balances; events: the feed and webhook endpoints"),
);

const Mode = named("ApiKeyMode", z.enum(MODES).describe("the mode the key acts in, shown by its prefix (fpk_test_… or fpk_live_…)"));

const ApiKey = named("ApiKey", z.object({
  id: doc.id,
  prefix: z.string().describe("the public part, shown in lists"),
  mode: Mode,
  name: z.string().nullable(),
  permissions: Permissions,
  createdAt: doc.timestamp,
  lastUsedAt: doc.timestamp.nullable().describe("updated at most once a minute"),
  revokedAt: doc.timestamp.nullable().describe("null while the key is active"),
  expiresAt: doc.timestamp.nullable().describe("when the key stops working by itself (rolled, or created to expire); null: never"),
  allowedIps: z.array(z.string()).nullable().describe("the addresses and CIDR ranges it may be used from; null: anywhere"),
  livemode: doc.livemode.describe("true for a live key (its mode, not the caller's)"),
}));

const CreatedKey = named("CreatedApiKey", z.object({
  id: doc.id,
  key: z.string().describe("send it as x-api-key; shown only in this answer"),
  prefix: z.string(),
  mode: Mode,
  name: z.string().nullable(),
  permissions: Permissions,
  createdAt: doc.timestamp,
  expiresAt: doc.timestamp.nullable(),
  allowedIps: z.array(z.string()).nullable(),
  livemode: doc.livemode.describe("true for a live key (its mode, not the caller's)"),
}));
const newKeyExample = {
  id: examples.apiKey.id,
  key: `${examples.apiKey.prefix}.abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ`,
  prefix: examples.apiKey.prefix,
  mode: examples.apiKey.mode,
  name: "reporting",
  permissions: { users: "read", ledger: "read" },
  createdAt: examples.at,
  livemode: examples.apiKey.livemode,
};

export const apiKeyRoutes = [
  route({
    method: "POST",
    path: "/v1/api-keys",
    operation: graphql(`mutation CreateApiKey($input: CreateApiKeyInput) { createApiKey(input: $input) { ...CreatedApiKeyFields } }`, [CreatedApiKeyFields]),
    variables: ({ body }) => ({
      input: { name: body.name, mode: body.mode, permissions: permissionsInput(body.permissions), expiresInHours: body.expiresInHours, allowedIps: body.allowedIps },
    }),
    result: (data) => apiKeyBody(data.createApiKey),
    docs: {
      summary: "Create an API key",
      description:
        "The full key is in this answer only; it is stored as a hash. No body: a full key that never expires, usable from anywhere. " +
        "With `permissions` the key can do only what they grant (anything else is a 403 naming the permission needed, e.g. `users:write`); " +
        "a restricted key can only create keys with no more than it has (403). " +
        "`expiresInHours` makes it stop working after that many hours; `allowedIps` limits it to those addresses (403 from any other). " +
        "`mode` (test or live) is the caller's by default; only a session may create a key of the other mode (an API key asking for it is a 403). " +
        "The key's prefix shows its mode: `fpk_test_…` or `fpk_live_…`.",
      body: named("CreateApiKeyRequest", CreateKeyInput.extend({
        name: z.string().min(1).max(100).optional().describe("a label for lists"),
        mode: Mode.nullish().describe("the mode of the new key; omitted or null: the caller's. Only a session may create a key of the other mode (403 for an API key)"),
        permissions: Permissions.optional(),
      })),
      response: CreatedKey,
      errors: ["BAD_USER_INPUT", "FORBIDDEN"],
      example: {
        body: { name: "reporting", mode: "test", permissions: { users: "read", ledger: "read" }, expiresInHours: 720, allowedIps: ["203.0.113.0/24", "2001:db8::/32"] },
        response: { ...newKeyExample, expiresAt: examples.later, allowedIps: ["203.0.113.0/24", "2001:db8::/32"] },
      },
    },
  }),
  route({
    method: "GET",
    path: "/v1/api-keys",
    operation: graphql(`query ListApiKeys { apiKeys { ...ApiKeyFields } }`, [ApiKeyFields]),
    result: (data) => data.apiKeys.map(apiKeyBody),
    docs: { summary: "List the client's API keys", response: z.array(ApiKey), example: { response: [examples.apiKey] } },
  }),
  route({
    method: "POST",
    path: "/v1/api-keys/:keyId/roll",
    operation: graphql(`mutation RollApiKey($id: ID!, $expiresInHours: Float) { rollApiKey(id: $id, expiresInHours: $expiresInHours) { ...CreatedApiKeyFields } }`, [CreatedApiKeyFields]),
    variables: ({ params, body }) => ({ id: params.keyId, expiresInHours: body.expiresInHours }),
    result: (data) => apiKeyBody(data.rollApiKey),
    errors: { NOT_FOUND: { field: "message" } },
    docs: {
      summary: "Roll an API key",
      description:
        "A new key (shown once) with the same mode, name, permissions and allowlist. The rolled key keeps working for `expiresInHours` " +
        "(0 to 168, fractions allowed; default 0: it stops at once), then is refused (401) on every instance, and streams opened with it end. " +
        "Rolling a key that is already expiring can only bring its end forward. A revoked or expired key cannot be rolled (409); " +
        "a restricted key cannot roll a key with permissions it does not have (403).",
      params: { keyId: "id of the key to roll" },
      body: named("RollApiKeyRequest", RollKeyInput),
      response: CreatedKey,
      example: { body: { expiresInHours: 24 }, response: { ...newKeyExample, expiresAt: null, allowedIps: null } },
      errors: ["NOT_FOUND", "CONFLICT", "FORBIDDEN"],
    },
  }),
  route({
    method: "DELETE",
    path: "/v1/api-keys/:keyId",
    operation: graphql(`mutation RevokeApiKey($id: ID!) { revokeApiKey(id: $id) { ...ApiKeyFields } }`, [ApiKeyFields]),
    variables: ({ params }) => ({ id: params.keyId }),
    result: (data) => ({ success: true, apiKey: apiKeyBody(data.revokeApiKey) }),
    errors: { NOT_FOUND: { field: "message" } },
    docs: {
      summary: "Revoke an API key",
      description: "It stops working at once; revoking twice is not an error.",
      params: { keyId: "id of the key" },
      response: z.object({ success: z.literal(true), apiKey: ApiKey }),
      example: { response: { success: true, apiKey: { ...examples.apiKey, revokedAt: examples.later } } },
      errors: ["NOT_FOUND"],
    },
  }),
];
