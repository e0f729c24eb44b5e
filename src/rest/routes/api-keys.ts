import type { Route } from "../route.js";

/** An API key as lists show it (also the `data.object` of API key events). */
export const API_KEY_KEYS = ["id", "prefix", "createdAt", "lastUsedAt", "revokedAt"] as const;
const API_KEY = API_KEY_KEYS.join(" ");

export const apiKeyRoutes: Route[] = [
  {
    method: "POST",
    path: "/v1/api-keys",
    operation: `mutation { createApiKey { id key prefix createdAt } }`,
    result: (data) => data.createApiKey,
  },
  {
    method: "GET",
    path: "/v1/api-keys",
    operation: `query { apiKeys { ${API_KEY} } }`,
    result: (data) => data.apiKeys,
  },
  {
    method: "DELETE",
    path: "/v1/api-keys/:keyId",
    operation: `mutation ($id: ID!) { revokeApiKey(id: $id) { ${API_KEY} } }`,
    variables: ({ params }) => ({ id: params.keyId }),
    result: (data) => ({ success: true, apiKey: data.revokeApiKey }),
    errors: { NOT_FOUND: { field: "message" } },
  },
];
