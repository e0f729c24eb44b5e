import { z } from "zod";
import { graphql } from "../../graphql/typed.js";
import { ApiKeyFields } from "../../keys/representation.js";
import { doc, named } from "../docs.js";
import { examples } from "../examples.js";
import { route } from "../route.js";

const ApiKey = named("ApiKey", z.object({
  id: doc.id,
  prefix: z.string().describe("the public part, shown in lists"),
  createdAt: doc.timestamp,
  lastUsedAt: doc.timestamp.nullable(),
  revokedAt: doc.timestamp.nullable().describe("null while the key is active"),
}));

export const apiKeyRoutes = [
  route({
    method: "POST",
    path: "/v1/api-keys",
    operation: graphql(`mutation { createApiKey { id key prefix createdAt } }`),
    result: (data) => data.createApiKey,
    docs: {
      summary: "Create an API key",
      description: "The full key is in this answer only; it is stored as a hash.",
      response: z.object({ id: doc.id, key: z.string().describe("send it as x-api-key"), prefix: z.string(), createdAt: doc.timestamp }),
      example: {
        response: { id: examples.apiKey.id, key: "fpk_0123456789ab.abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ", prefix: examples.apiKey.prefix, createdAt: examples.at },
      },
    },
  }),
  route({
    method: "GET",
    path: "/v1/api-keys",
    operation: graphql(`query { apiKeys { ...ApiKeyFields } }`, [ApiKeyFields]),
    result: (data) => data.apiKeys,
    docs: { summary: "List the client's API keys", response: z.array(ApiKey), example: { response: [examples.apiKey] } },
  }),
  route({
    method: "DELETE",
    path: "/v1/api-keys/:keyId",
    operation: graphql(`mutation ($id: ID!) { revokeApiKey(id: $id) { ...ApiKeyFields } }`, [ApiKeyFields]),
    variables: ({ params }) => ({ id: params.keyId }),
    result: (data) => ({ success: true, apiKey: data.revokeApiKey }),
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
