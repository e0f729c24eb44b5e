import { randomUUID } from "node:crypto";
import type { Sql } from "../db/sql.js";
import type { PrismaClient } from "../generated/prisma/client.js";
import type { EventIds } from "../events/ids.js";
import { readEvent } from "../events/log.js";
import type { Logger } from "../logger.js";
import type { ClientEvent } from "../events/types.js";
import { webhookMessage } from "./message.js";
import { openSecret } from "./secrets.js";
import { resolveWithDns, type ResolveHost } from "./resolve-host.js";
import { DestinationRefused, NoResponse, postWebhook } from "./sender.js";

export type DeliveryWorkerOptions = {
  prisma: PrismaClient;
  /** The claim, run every poll on every instance, as a prepared statement (Prisma's per-call cost was most of an idle instance's CPU). */
  sql: Sql;
  logger: Logger;
  encryptionKey: Buffer;
  /** Delay before each retry; when they are used up the delivery is FAILED. */
  retryScheduleMs: readonly number[];
  /** A 2xx within this long is success (10 s; tests shorten it). */
  timeoutMs: number;
  /** Added to the time-out for a send's lease (default LEASE_MARGIN_MS). */
  leaseMarginMs?: number;
  /** Unless WEBHOOK_ALLOW_PRIVATE_URLS: refuse destinations that resolve to non-public addresses. */
  strictUrls: boolean;
  pollMs?: number;
  /** Sends this worker keeps going at once (a new one starts as soon as one ends). */
  concurrency?: number;
  /** Sends in flight for one client across every worker, so one client's slow endpoints cannot hold the whole pool. */
  perClientConcurrency?: number;
  /** Sends in flight to one endpoint across every worker, so a receiver gets at most this many requests at once. */
  perEndpointConcurrency?: number;
  /** Name resolution for the sends (defaults to the system's DNS). */
  resolveHost?: ResolveHost;
  /** The ids the client knows its events by: the payload's id and the webhook-id. */
  eventIds: EventIds;
  slowSendMs?: number;
};

/**
 * Enough in flight that a receiver taking 300 ms per request still takes 50 events/s at each of two
 * endpoints (16 / 0.3 s ≈ 53/s per endpoint), with room in the pool for other clients.
 */
export const DEFAULT_CONCURRENCY = 64;
export const DEFAULT_PER_CLIENT_CONCURRENCY = 32;
export const DEFAULT_PER_ENDPOINT_CONCURRENCY = 16;
/**
 * A send still waiting for its answer after this long leaves the pool (it keeps its socket and its
 * place in its client's share): endpoints that never answer hold only their own client's sends,
 * never the slots every other client's deliveries need.
 */
const DEFAULT_SLOW_SEND_MS = 500;

/** A leased delivery; `attempts` already counts the attempt about to be made. */
type Claimed = { id: string; eventId: string; endpointId: string; clientId: string; attempts: number; leaseId: string };
type Outcome = { status: number | null; succeeded: boolean; error: string | null; durationMs: number; createdAt: Date };

/** Beyond the request time-out, so a lease never runs out while its holder may still be sending. */
const LEASE_MARGIN_MS = 50_000;

/**
 * Due deliveries, fairly per client, leased in one statement: $1 lease id, $2 per-client sends,
 * $3 lease seconds, $4 how many, $5 per-endpoint sends. In flight means leased and not yet run out.
 * An endpoint's oldest due come first, up to its share; of those, each client's oldest, up to its.
 */
const CLAIM = `
  WITH in_flight AS (
    SELECT "clientId", "endpointId" FROM "webhook_deliveries"
    WHERE "state" = 'PENDING' AND "leaseId" IS NOT NULL AND "nextAttemptAt" > now()
  ), client_busy AS (
    SELECT "clientId", count(*) AS sending FROM in_flight GROUP BY "clientId"
  ), endpoint_busy AS (
    SELECT "endpointId", count(*) AS sending FROM in_flight GROUP BY "endpointId"
  ), endpoint_due AS (
    SELECT due."id", due."clientId", due."nextAttemptAt"
    FROM (
      SELECT "id", "clientId", "endpointId", "nextAttemptAt",
             row_number() OVER (PARTITION BY "endpointId" ORDER BY "nextAttemptAt", "id") AS place
      FROM "webhook_deliveries"
      WHERE "state" = 'PENDING' AND "nextAttemptAt" <= now()
    ) AS due
    LEFT JOIN endpoint_busy ON endpoint_busy."endpointId" = due."endpointId"
    WHERE due.place + coalesce(endpoint_busy.sending, 0) <= $5::int
  ), fair AS (
    SELECT ranked."id", ranked."place" + coalesce(client_busy.sending, 0) AS turn
    FROM (
      SELECT "id", "clientId", row_number() OVER (PARTITION BY "clientId" ORDER BY "nextAttemptAt", "id") AS place
      FROM endpoint_due
    ) AS ranked
    LEFT JOIN client_busy ON client_busy."clientId" = ranked."clientId"
    WHERE ranked.place + coalesce(client_busy.sending, 0) <= $2::int
  )
  UPDATE "webhook_deliveries" AS delivery
  SET "leaseId" = $1::uuid, "attempts" = delivery."attempts" + 1,
      "nextAttemptAt" = now() + make_interval(secs => $3::float8)
  FROM (
    SELECT candidate."id" FROM "webhook_deliveries" AS candidate
    JOIN fair ON fair."id" = candidate."id"
    WHERE candidate."state" = 'PENDING' AND candidate."nextAttemptAt" <= now()
    ORDER BY fair.turn, candidate."nextAttemptAt" LIMIT $4::int
    FOR UPDATE OF candidate SKIP LOCKED
  ) AS due
  WHERE delivery."id" = due."id"
  RETURNING delivery."id", delivery."eventId", delivery."endpointId", delivery."clientId", delivery."attempts", delivery."leaseId"`;

/**
 * Sends queued deliveries from a pool of concurrent sends. Each claim takes due rows with FOR
 * UPDATE SKIP LOCKED and leases them (leaseId, nextAttemptAt pushed past the time-out) in one
 * statement, so two workers never take the same attempt; the result is written only under that
 * lease. A worker that dies mid-send leaves its lease to run out, and the attempt is made again
 * (at-least-once). A claim fills the pool's free slots round-robin across clients (each client's
 * oldest due first, clients with fewer sends in flight first), and gives no endpoint more than
 * perEndpointConcurrency and no client more than perClientConcurrency sends in flight (counting
 * other workers' leases). Nothing waiting is ever dropped: the queue is bounded by what is sent at
 * once, not by what waits. A send that waits longer than slowSendMs for its answer leaves the pool,
 * so endpoints that never answer delay only their own client.
 */
export class DeliveryWorker {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = true;
  private again = false;
  /** Sends that count against the pool. */
  private readonly inFlight = new Set<Promise<void>>();
  /** Every send not yet ended, slow ones included (stop waits for them). */
  private readonly sending = new Set<Promise<void>>();
  private readonly concurrency: number;

  constructor(private readonly options: DeliveryWorkerOptions) {
    this.concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  }

  start() {
    this.stopped = false;
    this.schedule(0);
  }

  /** Deliveries were queued in this process, or a slot freed: look now rather than at the next poll. */
  nudge() {
    if (this.stopped) return;
    if (this.running) this.again = true;
    else this.schedule(0);
  }

  async stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    await Promise.all(this.sending);
  }

  private schedule(delayMs: number) {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.running = this.poll().finally(() => (this.running = undefined));
    }, delayMs);
  }

  private async poll() {
    let more = false;
    try {
      const free = this.concurrency - this.inFlight.size;
      if (free > 0) {
        const claimed = await this.claim(free);
        claimed.forEach((delivery) => this.launch(delivery));
        more = claimed.length === free;
      }
    } catch (err) {
      this.options.logger.error({ err }, "webhook delivery poll failed");
    }
    if (this.stopped) return;
    // A full pool is looked at again when one of its sends ends (nudge).
    const soon = this.again || (more && this.inFlight.size < this.concurrency);
    this.again = false;
    this.schedule(soon ? 0 : (this.options.pollMs ?? 250));
  }

  private launch(delivery: Claimed) {
    const leavePool = () => {
      if (this.inFlight.delete(send)) this.nudge();
    };
    const slow = setTimeout(leavePool, this.options.slowSendMs ?? DEFAULT_SLOW_SEND_MS);
    const send: Promise<void> = this.deliver(delivery)
      .catch((err) => this.options.logger.error({ err, deliveryId: delivery.id }, "webhook delivery failed"))
      .finally(() => {
        clearTimeout(slow);
        this.sending.delete(send);
        this.inFlight.delete(send);
        // A slot, or a share of its client's, is free.
        this.nudge();
      });
    this.inFlight.add(send);
    this.sending.add(send);
  }

  private claim(limit: number): Promise<Claimed[]> {
    const leaseSeconds = (this.options.timeoutMs + (this.options.leaseMarginMs ?? LEASE_MARGIN_MS)) / 1000;
    const perClient = this.options.perClientConcurrency ?? DEFAULT_PER_CLIENT_CONCURRENCY;
    const perEndpoint = this.options.perEndpointConcurrency ?? DEFAULT_PER_ENDPOINT_CONCURRENCY;
    return this.options.sql.query<Claimed>("webhook_deliveries_claim", CLAIM, [randomUUID(), perClient, leaseSeconds, limit, perEndpoint]);
  }

  private async deliver(delivery: Claimed) {
    const { prisma } = this.options;
    const [event, endpoint] = await Promise.all([
      readEvent(this.options.sql, delivery.clientId, delivery.eventId),
      prisma.webhookEndpoint.findUnique({ where: { id: delivery.endpointId } }),
    ]);
    if (!event) throw new Error(`event ${delivery.eventId} of delivery ${delivery.id} not found`);
    if (!endpoint) return; // deleted meanwhile: its deliveries went with it
    const secrets = [endpoint.secretEnc];
    if (endpoint.previousSecretEnc && endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt > new Date()) {
      secrets.push(endpoint.previousSecretEnc);
    }
    let keys: string[];
    try {
      keys = secrets.map((sealed) => openSecret(this.options.encryptionKey, sealed));
    } catch (err) {
      // Another ENCRYPTION_KEY sealed it: every instance must share one. Recorded, so it does not stay leased unseen.
      this.options.logger.error({ err, endpointId: endpoint.id }, "webhook endpoint secret could not be decrypted");
      await this.record(delivery, { status: null, succeeded: false, error: "the endpoint's secret could not be read", durationMs: 0, createdAt: new Date() });
      return;
    }
    await this.record(delivery, await this.send(endpoint.url, this.options.eventIds.clientEvent(delivery.clientId, event), keys));
  }

  private async send(url: string, event: ClientEvent, secrets: string[]): Promise<Outcome> {
    const createdAt = new Date();
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const { headers, body } = webhookMessage(event, secrets);
    try {
      const status = await postWebhook(url, headers, body, {
        resolveHost: this.options.resolveHost ?? resolveWithDns,
        strict: this.options.strictUrls,
        timeoutMs: this.options.timeoutMs,
      });
      const succeeded = status >= 200 && status < 300;
      return { status, succeeded, error: succeeded ? null : `HTTP ${status}`, durationMs: elapsed(), createdAt };
    } catch (err) {
      return { status: null, succeeded: false, error: describeFailure(err), durationMs: elapsed(), createdAt };
    }
  }

  /** The attempt and the delivery's next state, written only if this worker still holds the lease. */
  private async record(delivery: Claimed, outcome: Outcome) {
    const retryIn = this.options.retryScheduleMs[delivery.attempts - 1];
    // Counted from the attempt's end, so a time-out does not eat into the pause before the next try.
    const nextAttemptAt = outcome.succeeded || retryIn === undefined ? null : new Date(outcome.createdAt.getTime() + outcome.durationMs + retryIn);
    const state = outcome.succeeded ? "SUCCEEDED" : nextAttemptAt ? "PENDING" : "FAILED";
    await this.options.prisma.$transaction(async (tx) => {
      const updated = await tx.webhookDelivery.updateMany({
        where: { id: delivery.id, leaseId: delivery.leaseId },
        data: { state, nextAttemptAt, leaseId: null },
      });
      if (!updated.count) return;
      await tx.webhookDeliveryAttempt.create({
        data: { deliveryId: delivery.id, clientId: delivery.clientId, endpointId: delivery.endpointId, eventId: delivery.eventId, attempt: delivery.attempts, nextAttemptAt, ...outcome },
      });
    });
  }
}

/**
 * What the attempts list says went wrong: what the endpoint's owner needs, nothing of the network's
 * internals (refused, reset, unreachable or a TLS failure are all "connection failed": telling them
 * apart would make the list a port scanner), nor anything the receiver sent.
 */
function describeFailure(err: unknown): string {
  if (err instanceof DestinationRefused) return err.message;
  if (err instanceof NoResponse) return "timed out";
  return "connection failed";
}
