import { z } from "zod";
import { ACCESS_LEVELS, RESOURCES } from "../../auth/permissions.js";
import { graphql } from "../../graphql/typed.js";
import { ApiKeyFields, apiKeyBody, permissionsBody, permissionsInput } from "../../keys/representation.js";
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

const ApiKey = named("ApiKey", z.object({
  id: doc.id,
  prefix: z.string().describe("the public part, shown in lists"),
  name: z.string().nullable(),
  permissions: Permissions,
  createdAt: doc.timestamp,
  lastUsedAt: doc.timestamp.nullable(),
  revokedAt: doc.timestamp.nullable().describe("null while the key is active"),
}));

export const apiKeyRoutes = [
  route({
    method: "POST",
    path: "/v1/api-keys",
    operation: graphql(`mutation ($input: CreateApiKeyInput) { createApiKey(input: $input) { id key prefix name permissions { resource access } createdAt } }`),
    variables: ({ body }) => ({ input: { name: body.name, permissions: permissionsInput(body.permissions) } }),
    result: (data) => ({ ...data.createApiKey, permissions: permissionsBody(data.createApiKey.permissions) }),
    docs: {
      summary: "Create an API key",
      description:
        "The full key is in this answer only; it is stored as a hash. Without `permissions` the key can do everything its client can; " +
        "with them, only what they grant (anything else is a 403 naming the permission needed, e.g. `users:write`). " +
        "A restricted key can only create keys with no more than it has (403).",
      body: named("CreateApiKeyRequest", z.object({
        name: z.string().min(1).max(100).optional().describe("a label for lists"),
        permissions: Permissions.optional(),
      })),
      response: z.object({
        id: doc.id,
        key: z.string().describe("send it as x-api-key"),
        prefix: z.string(),
        name: z.string().nullable(),
        permissions: Permissions,
        createdAt: doc.timestamp,
      }),
      errors: ["BAD_USER_INPUT", "FORBIDDEN"],
      example: {
        body: { name: "reporting", permissions: { users: "read", ledger: "read" } },
        response: {
          id: examples.apiKey.id,
          key: "fpk_0123456789ab.abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ",
          prefix: examples.apiKey.prefix,
          name: "reporting",
          permissions: { users: "read", ledger: "read" },
          createdAt: examples.at,
        },
      },
    },
  }),
  route({
    method: "GET",
    path: "/v1/api-keys",
    operation: graphql(`query { apiKeys { ...ApiKeyFields } }`, [ApiKeyFields]),
    result: (data) => data.apiKeys.map(apiKeyBody),
    docs: { summary: "List the client's API keys", response: z.array(ApiKey), example: { response: [examples.apiKey] } },
  }),
  route({
    method: "DELETE",
    path: "/v1/api-keys/:keyId",
    operation: graphql(`mutation ($id: ID!) { revokeApiKey(id: $id) { ...ApiKeyFields } }`, [ApiKeyFields]),
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
