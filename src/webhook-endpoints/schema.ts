import { builder } from "../graphql/builder.js";
import { LIVEMODE_FIELD } from "../graphql/livemode.js";
import { clientIdOf } from "../graphql/context.js";
import type { WebhookDelivery, WebhookDeliveryAttempt } from "../generated/prisma/client.js";
import type { EndpointView } from "./service.js";
import { MAX_ENDPOINTS_PER_CLIENT } from "./limits.js";
import { METADATA_DESCRIPTION, METADATA_INPUT_DESCRIPTION } from "../metadata.js";

/** The id the client knows the event by (see EventIds). */
const visibleEventId = (row: { clientId: string; eventId: string }, ctx: { services: { eventIds: { visible(clientId: string, id: string): string } } }) =>
  ctx.services.eventIds.visible(row.clientId, row.eventId);

const DeliveryAttempt = builder.objectRef<WebhookDeliveryAttempt>("WebhookDeliveryAttempt").implement({
  description: "One HTTP attempt to deliver an event to an endpoint.",
  fields: (t) => ({
    id: t.exposeID("id"),
    livemode: t.boolean(LIVEMODE_FIELD),
    eventId: t.id({ resolve: (attempt, _args, ctx) => visibleEventId(attempt, ctx) }),
    attempt: t.exposeInt("attempt", { description: "1 for the first try of a delivery, 2 for its first retry, …" }),
    status: t.exposeInt("status", { nullable: true, description: "The HTTP status; null when no response came" }),
    succeeded: t.exposeBoolean("succeeded"),
    error: t.exposeString("error", { nullable: true }),
    durationMs: t.exposeInt("durationMs"),
    createdAt: t.field({ type: "DateTime", resolve: (attempt) => attempt.createdAt }),
    nextAttemptAt: t.field({ type: "DateTime", nullable: true, description: "When it is tried again; null when it succeeded or gave up", resolve: (attempt) => attempt.nextAttemptAt }),
  }),
});

const Endpoint = builder.objectRef<EndpointView & { secret?: string }>("WebhookEndpoint").implement({
  description: "Where the client receives its events, signed per Standard Webhooks.",
  fields: (t) => ({
    id: t.exposeID("id"),
    livemode: t.boolean(LIVEMODE_FIELD),
    url: t.exposeString("url"),
    events: t.exposeStringList("events", { nullable: true, description: "The event types sent there; null: every type, those added later included" }),
    description: t.exposeString("description", { nullable: true }),
    enabled: t.exposeBoolean("enabled"),
    metadata: t.field({ type: "JSON", description: METADATA_DESCRIPTION, resolve: (endpoint) => endpoint.metadata }),
    secret: t.string({
      nullable: true,
      description: "The signing secret (whsec_…): only in the answers of createWebhookEndpoint and rotateWebhookEndpointSecret, null elsewhere",
      resolve: (endpoint) => endpoint.secret ?? null,
    }),
    createdAt: t.field({ type: "DateTime", resolve: (endpoint) => endpoint.createdAt }),
    deliveries: t.field({
      type: [DeliveryAttempt],
      description: "Delivery attempts, newest first; limit 1–100 (default 20).",
      args: { limit: t.arg.int() },
      resolve: async (endpoint, args, ctx) => ctx.services.webhookEndpoints.attempts(await clientIdOf(ctx), endpoint.id, args.limit),
    }),
  }),
});

const DeletedEndpoint = builder.simpleObject("DeletedWebhookEndpoint", {
  fields: (t) => ({ id: t.id(), deleted: t.boolean() }),
});

const QueuedDelivery = builder.objectRef<WebhookDelivery>("WebhookDelivery").implement({
  description: "An event queued for an endpoint.",
  fields: (t) => ({
    id: t.exposeID("id"),
    livemode: t.boolean(LIVEMODE_FIELD),
    eventId: t.id({ resolve: (delivery, _args, ctx) => visibleEventId(delivery, ctx) }),
    endpointId: t.exposeID("endpointId"),
    nextAttemptAt: t.field({ type: "DateTime", nullable: true, resolve: (delivery) => delivery.nextAttemptAt }),
  }),
});

const CreateWebhookEndpointInput = builder.inputType("CreateWebhookEndpointInput", {
  fields: (t) => ({
    url: t.string({ required: true, description: "https (http and loopback too while SANDBOX is on)" }),
    events: t.stringList({
      description: "Event types to send (at least one); omitted or null: every type. A restricted key may name only types whose resource it may read (omitted: it must read them all)",
    }),
    description: t.string(),
    metadata: t.field({ type: "JSON", description: METADATA_INPUT_DESCRIPTION }),
  }),
});

builder.queryFields((t) => ({
  webhookEndpoints: t.field({
    permission: "events:read",
    type: [Endpoint],
    description: "The client's webhook endpoints, oldest first (without secrets).",
    extensions: { maxListSize: MAX_ENDPOINTS_PER_CLIENT },
    resolve: async (_root, _args, ctx) => ctx.services.webhookEndpoints.list(await clientIdOf(ctx)),
  }),
  webhookEndpoint: t.field({
    permission: "events:read",
    type: Endpoint,
    nullable: true,
    description: "One of the client's webhook endpoints; NOT_FOUND otherwise.",
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => ctx.services.webhookEndpoints.get(await clientIdOf(ctx), args.id),
  }),
}));

builder.mutationFields((t) => ({
  createWebhookEndpoint: t.field({
    permission: "events:write",
    type: Endpoint,
    args: { input: t.arg({ type: CreateWebhookEndpointInput, required: true }) },
    resolve: async (_root, args, ctx) => ctx.services.webhookEndpoints.create(await ctx.client(), args.input),
  }),
  deleteWebhookEndpoint: t.field({
    permission: "events:write",
    type: DeletedEndpoint,
    description: "Removes the endpoint and its queued deliveries. A restricted key needs what creating it needs: the read permission of every type it receives.",
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => ctx.services.webhookEndpoints.delete(await ctx.client(), args.id),
  }),
  rotateWebhookEndpointSecret: t.field({
    permission: "events:write",
    type: Endpoint,
    description:
      "A new secret, shown once; the previous one keeps signing alongside for 24 hours. A restricted key needs what creating the endpoint needs: the read permission of every type it receives.",
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => ctx.services.webhookEndpoints.rotateSecret(await ctx.client(), args.id),
  }),
  resendEvent: t.field({
    permission: "events:write",
    type: [QueuedDelivery],
    description: "Queues the event again now: to endpointId, else to every enabled endpoint that takes its type.",
    extensions: { maxListSize: MAX_ENDPOINTS_PER_CLIENT },
    args: { id: t.arg.id({ required: true }), endpointId: t.arg.id() },
    resolve: async (_root, args, ctx) => ctx.services.webhookEndpoints.resend(await ctx.client(), args.id, args.endpointId),
  }),
}));
