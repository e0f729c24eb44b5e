import { z } from "zod";
import type { Prisma, PrismaClient, WebhookEndpoint } from "../generated/prisma/client.js";
import { AppError, badInput, notFound } from "../errors.js";
import type { EventIds } from "../events/ids.js";
import { inTransaction } from "../db/transaction.js";
import { MAX_PAGE, parseEventTypes, type EventReader } from "../events/service.js";
import { assertReadable, EVENT_TYPES, type EventType } from "../events/types.js";
import { newMetadata, metadataChanges, storedMetadata, type Metadata } from "../metadata.js";
import { parseInput, requireUuid } from "../validation.js";
import { newSecret, sealSecret } from "./secrets.js";
import { admitEndpointUrl } from "./url-policy.js";
import type { ResolveHost } from "./resolve-host.js";
import { MAX_ENDPOINTS_PER_CLIENT, MAX_PENDING_PER_ENDPOINT } from "./limits.js";

/** How long a rotated-out secret keeps signing alongside the new one. */
export const PREVIOUS_SECRET_OVERLAP_MS = 24 * 60 * 60 * 1000;
const DEFAULT_ATTEMPTS_PAGE = 20;

export const EndpointInput = z.object({
  url: z.string({ error: "url is required" }),
  events: z.array(z.string(), { error: "events must be a list of event types" }).min(1, "events must name at least one type (omit it for every type)").max(50).nullish(),
  description: z.string({ error: "description must be text" }).trim().max(500, "description must be at most 500 characters").nullish(),
  metadata: metadataChanges,
});

/** `events` null: every event type, those added later included (stored as an empty list). */
export type EndpointView = { id: string; url: string; events: string[] | null; description: string | null; enabled: boolean; metadata: Metadata; createdAt: Date };

const viewOf = (endpoint: WebhookEndpoint): EndpointView => ({
  id: endpoint.id,
  url: endpoint.url,
  events: endpoint.eventTypes.length ? endpoint.eventTypes : null,
  description: endpoint.description,
  enabled: endpoint.enabled,
  metadata: storedMetadata(endpoint.metadata),
  createdAt: endpoint.createdAt,
});

type Deps = {
  prisma: PrismaClient;
  encryptionKey: Buffer;
  /** Unless WEBHOOK_ALLOW_PRIVATE_URLS: https and public addresses only. */
  strictUrls: boolean;
  resolveHost: ResolveHost;
  eventIds: EventIds;
  /** Called when deliveries were queued, so this instance's worker looks at once. */
  onQueued: () => void;
};

/** Outbound webhook endpoints of a client: registration, secrets, the attempts log, and resends. */
export class WebhookEndpointService {
  constructor(private readonly deps: Deps) {}

  /**
   * The secret is returned here and on rotation only; the database keeps it encrypted. A restricted
   * key may register only types it may read (an endpoint without a list takes every type, so it needs
   * every one's read): anything else is a 403 naming the missing permission.
   */
  async create(creator: EventReader, input: Record<string, unknown>): Promise<EndpointView & { secret: string }> {
    const { clientId } = creator;
    const { url, events, description, metadata } = parseInput(EndpointInput, input);
    const eventTypes = parseEventTypes(events, "events");
    assertReadable(creator.permissions, endpointTypes(eventTypes));
    const target = await admitEndpointUrl(url, this.deps.strictUrls, this.deps.resolveHost);
    const secret = newSecret();
    // Registrations of one client queue on its lock: wait like money paths do rather than fail (a 500) under load.
    const endpoint = await inTransaction(this.deps.prisma, async (tx) => {
      await lockClientEndpoints(tx, clientId);
      if ((await tx.webhookEndpoint.count({ where: { clientId } })) >= MAX_ENDPOINTS_PER_CLIENT) {
        throw badInput(`A client has at most ${MAX_ENDPOINTS_PER_CLIENT} webhook endpoints`);
      }
      return tx.webhookEndpoint.create({
        data: {
          clientId,
          url: target,
          eventTypes,
          description: description || null,
          metadata: newMetadata(metadata),
          secretEnc: sealSecret(this.deps.encryptionKey, secret),
        },
      });
    });
    return { ...viewOf(endpoint), secret };
  }

  async list(clientId: string): Promise<EndpointView[]> {
    const endpoints = await this.deps.prisma.webhookEndpoint.findMany({ where: { clientId }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
    return endpoints.map(viewOf);
  }

  async get(clientId: string, id: unknown): Promise<EndpointView> {
    return viewOf(await this.own(clientId, id));
  }

  /** Removes the endpoint with its queued deliveries and their attempts. */
  async delete(manager: EventReader, id: unknown): Promise<{ id: string; deleted: true }> {
    const { clientId } = manager;
    const endpoint = await this.managed(manager, id);
    await this.deps.prisma.webhookEndpoint.deleteMany({ where: { id: endpoint.id, clientId } });
    return { id: endpoint.id, deleted: true };
  }

  /** A new secret, shown once; the current one keeps signing alongside for 24 hours. */
  async rotateSecret(manager: EventReader, id: unknown): Promise<EndpointView & { secret: string }> {
    const endpoint = await this.managed(manager, id);
    const secret = newSecret();
    const rotated = await this.deps.prisma.webhookEndpoint.update({
      where: { id: endpoint.id },
      data: {
        secretEnc: sealSecret(this.deps.encryptionKey, secret),
        previousSecretEnc: endpoint.secretEnc,
        previousSecretExpiresAt: new Date(Date.now() + PREVIOUS_SECRET_OVERLAP_MS),
      },
    });
    return { ...viewOf(rotated), secret };
  }

  /** The endpoint's delivery attempts, newest first. */
  async attempts(clientId: string, endpointId: string, limit: number | null | undefined) {
    const take = limit ?? DEFAULT_ATTEMPTS_PAGE;
    if (!Number.isInteger(take) || take < 1 || take > MAX_PAGE) throw badInput(`limit must be an integer from 1 to ${MAX_PAGE}`);
    return this.deps.prisma.webhookDeliveryAttempt.findMany({
      where: { endpointId, clientId },
      orderBy: [{ createdAt: "desc" }, { attempt: "desc" }],
      take,
    });
  }

  /**
   * Queues the event again, due now: to the given endpoint, else to every enabled endpoint that
   * takes its type. A new delivery with its own retries; the message id (the event id) is the same.
   * A restricted key may resend only an event it may read.
   */
  async resend(sender: EventReader, eventId: string, endpointId: string | null | undefined) {
    const { clientId } = sender;
    const logId = this.deps.eventIds.logId(clientId, eventId);
    const event = logId ? await this.deps.prisma.event.findFirst({ where: { id: logId, clientId }, select: { id: true, type: true } }) : null;
    if (!event) throw notFound("Event");
    assertReadable(sender.permissions, [event.type as EventType]);
    const endpoints = endpointId
      ? [await this.own(clientId, endpointId)]
      : await this.deps.prisma.webhookEndpoint.findMany({
          where: { clientId, enabled: true, OR: [{ eventTypes: { isEmpty: true } }, { eventTypes: { has: event.type } }] },
        });
    if (!endpoints.length) throw badInput(`No enabled webhook endpoint takes ${event.type} events`);
    const deliveries = await inTransaction(this.deps.prisma, async (tx) => {
      await lockClientEndpoints(tx, clientId);
      const full = await tx.webhookDelivery.groupBy({
        by: ["endpointId"],
        where: { endpointId: { in: endpoints.map((endpoint) => endpoint.id) }, state: "PENDING" },
        _count: true,
        having: { endpointId: { _count: { gte: MAX_PENDING_PER_ENDPOINT } } },
      });
      if (full.length) {
        throw new AppError("RATE_LIMITED", `Webhook endpoint ${full[0].endpointId} already has ${MAX_PENDING_PER_ENDPOINT} deliveries pending`, { retryAfter: 60 });
      }
      return Promise.all(endpoints.map((endpoint) => tx.webhookDelivery.create({ data: { clientId, eventId: event.id, endpointId: endpoint.id } })));
    });
    this.deps.onQueued();
    return deliveries;
  }

  /**
   * An endpoint the caller may change (delete, rotate the secret of, or any later change): it needs
   * what registering that endpoint needs, the read permission of every type it receives (every type
   * for an endpoint without a list). Otherwise a key with only `events:write` could take over an
   * endpoint receiving events it may not read, and its new secret. A 403 names the missing permission.
   */
  private async managed(manager: EventReader, id: unknown): Promise<WebhookEndpoint> {
    const endpoint = await this.own(manager.clientId, id);
    assertReadable(manager.permissions, endpointTypes(endpoint.eventTypes));
    return endpoint;
  }

  private async own(clientId: string, id: unknown): Promise<WebhookEndpoint> {
    const endpoint = await this.deps.prisma.webhookEndpoint.findFirst({ where: { id: requireUuid(id, "id"), clientId } });
    if (!endpoint) throw notFound("Webhook endpoint");
    return endpoint;
  }
}

/** The types an endpoint receives: its list, or every type when it has none. */
const endpointTypes = (eventTypes: readonly string[]): readonly EventType[] => (eventTypes.length ? (eventTypes as EventType[]) : EVENT_TYPES);

/** Serialises a client's endpoint registrations and resends, so the caps above are checked and applied atomically. */
async function lockClientEndpoints(tx: Prisma.TransactionClient, clientId: string) {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`webhook-endpoints:${clientId}`}))`;
}
