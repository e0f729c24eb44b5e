import { pickKeys } from "../pick-keys.js";
import { integer, type Route } from "../route.js";

const ENDPOINT = ["id", "url", "events", "description", "enabled", "createdAt"] as const;
const ENDPOINT_FIELDS = ENDPOINT.join(" ");
const ATTEMPT_FIELDS = "id eventId attempt status succeeded error durationMs createdAt nextAttemptAt";

/** The endpoint with its secret, in the order of the answer to a creation. */
const withSecret = (endpoint: Record<string, unknown>) => pickKeys(endpoint, ["id", "url", "events", "description", "enabled", "secret", "createdAt"]);

export const webhookEndpointRoutes: Route[] = [
  {
    method: "POST",
    path: "/v1/webhook-endpoints",
    operation: `mutation ($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { ${ENDPOINT_FIELDS} secret } }`,
    variables: ({ body }) => ({ input: { url: body.url, events: body.events, description: body.description } }),
    result: (data) => withSecret(data.createWebhookEndpoint),
    status: 201,
  },
  {
    method: "GET",
    path: "/v1/webhook-endpoints",
    operation: `query { webhookEndpoints { ${ENDPOINT_FIELDS} } }`,
    result: (data) => ({ data: data.webhookEndpoints }),
  },
  {
    method: "GET",
    path: "/v1/webhook-endpoints/:id",
    operation: `query ($id: ID!) { webhookEndpoint(id: $id) { ${ENDPOINT_FIELDS} } }`,
    variables: ({ params }) => ({ id: params.id }),
    result: (data) => data.webhookEndpoint,
  },
  {
    method: "DELETE",
    path: "/v1/webhook-endpoints/:id",
    operation: `mutation ($id: ID!) { deleteWebhookEndpoint(id: $id) { id deleted } }`,
    variables: ({ params }) => ({ id: params.id }),
    result: (data) => data.deleteWebhookEndpoint,
  },
  {
    method: "POST",
    path: "/v1/webhook-endpoints/:id/rotate-secret",
    operation: `mutation ($id: ID!) { rotateWebhookEndpointSecret(id: $id) { ${ENDPOINT_FIELDS} secret } }`,
    variables: ({ params }) => ({ id: params.id }),
    result: (data) => withSecret(data.rotateWebhookEndpointSecret),
  },
  {
    method: "GET",
    path: "/v1/webhook-endpoints/:id/deliveries",
    operation: `query ($id: ID!, $limit: Int) { webhookEndpoint(id: $id) { deliveries(limit: $limit) { ${ATTEMPT_FIELDS} } } }`,
    variables: ({ params, query }) => ({ id: params.id, limit: integer(query.limit) }),
    result: (data) => ({ data: data.webhookEndpoint.deliveries }),
  },
  {
    method: "POST",
    path: "/v1/events/:id/resend",
    operation: `mutation ($id: ID!, $endpointId: ID) { resendEvent(id: $id, endpointId: $endpointId) { id eventId endpointId nextAttemptAt } }`,
    variables: ({ params, body }) => ({ id: params.id, endpointId: body.endpointId }),
    result: (data) => ({ data: data.resendEvent }),
    status: 202,
  },
];
