import { randomUUID } from "node:crypto";
import pg from "pg";
import type { Logger } from "../logger.js";

/** The one NOTIFY channel every instance listens on; the event's topic travels in the payload. */
export const EVENTS_CHANNEL = "fintech_events";
/** Shown in pg_stat_activity, so each process's listening connection can be told apart from the pool's. */
export const LISTENER_APPLICATION_NAME = `fintech-events pid ${process.pid}`;
/** One NOTIFY per payload, in one statement. */
const NOTIFY = "SELECT pg_notify($1, payload) FROM unnest($2::text[]) AS payload";
/** PostgreSQL refuses NOTIFY payloads of 8000 bytes or more. */
const MAX_PAYLOAD_BYTES = 7999;
/**
 * A NOTIFY on the listening connection that has not returned by then (a connection a firewall dropped
 * without a reset never answers) gives that connection up for a new one and goes through the pool.
 */
const LISTENER_NOTIFY_TIMEOUT_MS = 2000;
/** How long close() waits for publishes in flight and for the listening connection to end. */
const CLOSE_WAIT_MS = 2000;

/** `work`, or a rejection once `ms` have passed (the work itself is left to finish or not). */
function within<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)));
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** `origin`: the publishing instance, which has delivered the event to its own listeners already. */
type Envelope = { origin: string; topic: string; detail: unknown };

export type PostgresEventTarget = EventTarget & { close(): Promise<void> };

export type PostgresEventTargetOptions = {
  connectionString: string;
  /** Publishes go through the pool; the listening connection is dedicated and never returned to it. */
  pool: pg.Pool;
  logger: Logger;
  reconnectDelayMs?: number;
};

/**
 * An EventTarget shared by every instance on one database: dispatchEvent delivers to this instance's
 * listeners at once (exactly once) and NOTIFYs the others, which deliver what they hear to theirs. A
 * NOTIFY retried through the pool after the listening connection failed under it may reach them twice;
 * that is harmless for what travels here (a nudge to re-read the event log, a credential to forget).
 * Resolves once the first LISTEN is active; a lost listening connection is re-opened (events published
 * while no instance listens are not replayed).
 */
export async function openPostgresEventTarget(options: PostgresEventTargetOptions): Promise<PostgresEventTarget> {
  const target = new NotifyEventTarget(options);
  await target.listen();
  return target;
}

class NotifyEventTarget extends EventTarget implements PostgresEventTarget {
  private readonly origin = randomUUID();
  private listener?: pg.Client;
  /**
   * The listening connection once its LISTEN is active, and how to give it up: NOTIFYs go out on it,
   * not queued behind the pool's transactions.
   */
  private listening?: { client: pg.Client; lost: (err: Error) => void };
  private reconnectTimer?: NodeJS.Timeout;
  private closed = false;
  /**
   * Publishes run one after another so that subscribers see an entity's changes in order; those
   * made while one is in flight wait together and go in the next statement, in order, instead of
   * queueing one round trip each behind it.
   */
  private publishing: Promise<void> = Promise.resolve();
  private waiting: string[] = [];

  constructor(private readonly options: PostgresEventTargetOptions) {
    super();
  }

  override dispatchEvent(event: Event): boolean {
    const payload = JSON.stringify({ origin: this.origin, topic: event.type, detail: (event as CustomEvent).detail } satisfies Envelope);
    if (Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES) {
      this.options.logger.error({ topic: event.type, bytes: Buffer.byteLength(payload) }, "event too large to publish");
      return false;
    }
    // The detail as the other instances will read it (a Date, say, becomes its text everywhere alike).
    super.dispatchEvent(new CustomEvent(event.type, { detail: (JSON.parse(payload) as Envelope).detail }));
    this.waiting.push(payload);
    if (this.waiting.length === 1) this.publishing = this.publishing.then(() => this.publishWaiting());
    return true;
  }

  private async publishWaiting() {
    const payloads = this.waiting;
    this.waiting = [];
    // A function scan yields the array in order, so the NOTIFYs go out in publishing order. Named, so
    // each connection parses it once (parsing it every time cost PostgreSQL more than running it).
    const notify = (db: pg.Client | pg.Pool) => db.query({ name: "events_notify", text: NOTIFY, values: [EVENTS_CHANNEL, payloads] });
    const listening = this.listening;
    if (listening) {
      try {
        await within(notify(listening.client), LISTENER_NOTIFY_TIMEOUT_MS);
        return;
      } catch (err) {
        listening.lost(err as Error);
      }
    }
    try {
      await notify(this.options.pool);
    } catch (err) {
      const topics = payloads.map((payload) => (JSON.parse(payload) as Envelope).topic);
      this.options.logger.error({ err, topics }, "could not publish events");
    }
  }

  async listen(): Promise<void> {
    // keepAlive: an idle connection that a firewall dropped is noticed by the kernel, not only by a NOTIFY.
    const client = new pg.Client({ connectionString: this.options.connectionString, application_name: LISTENER_APPLICATION_NAME, keepAlive: true });
    this.listener = client;
    // Only a connection that got as far as LISTEN is re-opened here; a failed attempt throws to the caller.
    let listening = false;
    const onLost = (err?: Error) => {
      if (!listening || this.closed) return;
      listening = false;
      if (this.listening?.client === client) this.listening = undefined;
      this.options.logger.warn({ err }, "event listener connection lost; reconnecting");
      client.end().catch(() => undefined);
      this.scheduleReconnect();
    };
    client.on("notification", (message) => {
      if (message.channel === EVENTS_CHANNEL && message.payload) this.deliver(message.payload);
    });
    client.on("error", onLost);
    client.on("end", () => onLost());
    try {
      await client.connect();
      await client.query(`LISTEN ${EVENTS_CHANNEL}`);
      listening = true;
      this.listening = { client, lost: onLost };
    } catch (err) {
      client.end().catch(() => undefined);
      throw err;
    }
  }

  private scheduleReconnect() {
    this.reconnectTimer = setTimeout(() => {
      this.listen().catch((err) => {
        if (this.closed) return;
        this.options.logger.warn({ err }, "event listener could not reconnect; retrying");
        this.scheduleReconnect();
      });
    }, this.options.reconnectDelayMs ?? 1000);
  }

  private deliver(payload: string) {
    let envelope: Envelope;
    try {
      envelope = JSON.parse(payload) as Envelope;
    } catch (err) {
      this.options.logger.warn({ err }, "ignored a malformed event notification");
      return;
    }
    if (envelope.origin === this.origin) return;
    super.dispatchEvent(new CustomEvent(envelope.topic, { detail: envelope.detail }));
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    const ended = async () => {
      await this.publishing;
      this.listening = undefined;
      await this.listener?.end();
    };
    // A connection that no longer answers must not hold the shutdown.
    await within(ended(), CLOSE_WAIT_MS).catch(() => undefined);
  }
}
