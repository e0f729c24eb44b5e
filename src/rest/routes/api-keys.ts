import type { Route } from "../route.js";

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
    operation: `query { apiKeys { id prefix createdAt lastUsedAt revokedAt } }`,
    result: (data) => data.apiKeys,
  },
  {
    method: "DELETE",
    path: "/v1/api-keys/:keyId",
    operation: `mutation ($id: ID!) { revokeApiKey(id: $id) { id prefix createdAt lastUsedAt revokedAt } }`,
    variables: ({ params }) => ({ id: params.keyId }),
    result: (data) => ({ success: true, apiKey: data.revokeApiKey }),
    errors: { NOT_FOUND: { field: "message" } },
  },
];
