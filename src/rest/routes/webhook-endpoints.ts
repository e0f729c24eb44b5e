import { z } from "zod";
import { graphql } from "../../graphql/typed.js";
import { EVENT_TYPES } from "../../events/types.js";
import { pickKeys } from "../../representation.js";
import { EndpointInput } from "../../webhook-endpoints/service.js";
import { doc, named } from "../docs.js";
import { examples } from "../examples.js";
import { METADATA_DESCRIPTION } from "../../metadata.js";
import { found, integer, route } from "../route.js";

const EndpointFields = graphql(`fragment EndpointFields on WebhookEndpoint { id url events description enabled createdAt metadata livemode }`);
const AttemptFields = graphql(`
  fragment AttemptFields on WebhookDeliveryAttempt { id eventId attempt status succeeded error durationMs createdAt nextAttemptAt livemode }
`);

/** The endpoint with its secret, in the order of the answer to a creation. */
const withSecret = (endpoint: Record<string, unknown>) => pickKeys(endpoint, ["id", "url", "events", "description", "enabled", "secret", "createdAt", "metadata", "livemode"]);

const Endpoint = named("WebhookEndpoint", z.object({
  id: doc.id,
  url: z.string(),
  events: z.array(z.enum(EVENT_TYPES)).nullable().describe("the types it receives; null: every type, those added later included"),
  description: z.string().nullable(),
  enabled: z.boolean(),
  createdAt: doc.timestamp,
  metadata: doc.metadata.describe(METADATA_DESCRIPTION),
  livemode: doc.livemode,
}));
const EndpointWithSecret = named("WebhookEndpointWithSecret", Endpoint.extend({ secret: z.string().describe("whsec_…: shown only in this answer") }));
const withSecretExample = { ...examples.webhookEndpoint, secret: examples.webhookSecret };
const Attempt = named("WebhookDeliveryAttempt", z.object({
  id: doc.id,
  eventId: z.string(),
  attempt: z.int(),
  status: z.int().nullable().describe("the receiver's HTTP status; null when it did not answer"),
  succeeded: z.boolean(),
  error: z.string().nullable(),
  durationMs: z.int(),
  createdAt: doc.timestamp,
  nextAttemptAt: doc.timestamp.nullable(),
  livemode: doc.livemode,
}));
const endpointParam = { id: "the endpoint's id (UUID)" };

export const webhookEndpointRoutes = [
  route({
    method: "POST",
    path: "/v1/webhook-endpoints",
    operation: graphql(`mutation CreateWebhookEndpoint($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { ...EndpointFields secret } }`, [EndpointFields]),
    variables: ({ body }) => ({ input: { url: body.url, events: body.events, description: body.description, metadata: body.metadata } }),
    result: (data) => withSecret(data.createWebhookEndpoint),
    status: 201,
    docs: {
      summary: "Register a webhook endpoint (all event types when events is omitted)",
      body: named(
        "CreateWebhookEndpointRequest",
        EndpointInput.extend({
          events: z.array(z.enum(EVENT_TYPES)).min(1).max(50).nullish().describe("the types to send; omitted or null: every type, those added later included"),
        }),
      ),
      response: EndpointWithSecret,
      example: {
        body: {
          url: examples.webhookEndpoint.url,
          events: examples.webhookEndpoint.events,
          description: examples.webhookEndpoint.description,
          metadata: examples.webhookEndpoint.metadata,
        },
        response: withSecretExample,
      },
    },
  }),
  route({
    method: "GET",
    path: "/v1/webhook-endpoints",
    operation: graphql(`query ListWebhookEndpoints { webhookEndpoints { ...EndpointFields } }`, [EndpointFields]),
    result: (data) => ({ data: data.webhookEndpoints }),
    docs: {
      summary: "List the client's webhook endpoints (no secrets)",
      response: z.object({ data: z.array(Endpoint) }),
      example: { response: { data: [examples.webhookEndpoint] } },
    },
  }),
  route({
    method: "GET",
    path: "/v1/webhook-endpoints/:id",
    operation: graphql(`query GetWebhookEndpoint($id: ID!) { webhookEndpoint(id: $id) { ...EndpointFields } }`, [EndpointFields]),
    variables: ({ params }) => ({ id: params.id }),
    result: (data) => data.webhookEndpoint,
    docs: { summary: "One webhook endpoint (no secret)", params: endpointParam, response: Endpoint, errors: ["NOT_FOUND"], example: { response: examples.webhookEndpoint } },
  }),
  route({
    method: "DELETE",
    path: "/v1/webhook-endpoints/:id",
    operation: graphql(`mutation DeleteWebhookEndpoint($id: ID!) { deleteWebhookEndpoint(id: $id) { id deleted } }`),
    variables: ({ params }) => ({ id: params.id }),
    result: (data) => data.deleteWebhookEndpoint,
    docs: { summary: "Delete a webhook endpoint", params: endpointParam, response: z.object({ id: doc.id, deleted: z.literal(true) }),
      errors: ["NOT_FOUND"],
      example: { response: { id: examples.webhookEndpoint.id, deleted: true } },
    },
  }),
  route({
    method: "POST",
    path: "/v1/webhook-endpoints/:id/rotate-secret",
    operation: graphql(`mutation RotateWebhookEndpointSecret($id: ID!) { rotateWebhookEndpointSecret(id: $id) { ...EndpointFields secret } }`, [EndpointFields]),
    variables: ({ params }) => ({ id: params.id }),
    result: (data) => withSecret(data.rotateWebhookEndpointSecret),
    docs: {
      summary: "Rotate an endpoint's secret",
      description: "The new secret is shown once; the old one keeps signing beside it for 24 hours.",
      params: endpointParam,
      response: EndpointWithSecret,
      errors: ["NOT_FOUND"],
      example: { response: { ...withSecretExample, secret: "whsec_Q2hhbmdlZCBzZWNyZXQgZm9yIHJvdGF0aW9u" } },
    },
  }),
  route({
    method: "GET",
    path: "/v1/webhook-endpoints/:id/deliveries",
    operation: graphql(`query ListWebhookDeliveries($id: ID!, $limit: Int) { webhookEndpoint(id: $id) { deliveries(limit: $limit) { ...AttemptFields } } }`, [AttemptFields]),
    variables: ({ params, query }) => ({ id: params.id, limit: integer(query.limit) }),
    result: (data) => ({ data: found(data.webhookEndpoint).deliveries }),
    docs: {
      summary: "Delivery attempts to an endpoint, newest first",
      params: endpointParam,
      query: z.object({ limit: z.int().min(1).max(100).optional().describe("default 20") }),
      response: z.object({ data: z.array(Attempt) }),
      errors: ["NOT_FOUND"],
      example: { response: { data: [examples.deliveryAttempt] } },
    },
  }),
  route({
    method: "POST",
    path: "/v1/events/:id/resend",
    operation: graphql(`mutation ResendEvent($id: ID!, $endpointId: ID) { resendEvent(id: $id, endpointId: $endpointId) { id eventId endpointId nextAttemptAt livemode } }`),
    variables: ({ params, body }) => ({ id: params.id, endpointId: body.endpointId }),
    result: (data) => ({ data: data.resendEvent }),
    status: 202,
    docs: {
      summary: "Queue a new delivery of an event now (to one endpoint, or to every endpoint that takes its type)",
      params: { id: "the event's id" },
      body: z.object({ endpointId: doc.id.optional() }),
      response: z.object({ data: z.array(z.object({ id: doc.id, eventId: z.string(), endpointId: doc.id, nextAttemptAt: doc.timestamp, livemode: doc.livemode })) }),
      errors: ["NOT_FOUND"],
      example: {
        body: { endpointId: examples.webhookEndpoint.id },
        response: { data: [{ id: examples.deliveryAttempt.id, eventId: examples.event.id, endpointId: examples.webhookEndpoint.id, nextAttemptAt: examples.later, livemode: false }] },
      },
    },
  }),
];
