import type pg from "pg";
import { Redis } from "ioredis";
import { createRedisEventTarget } from "@graphql-yoga/redis-event-target";
import type { Logger } from "../logger.js";
import { createEvents, type Events } from "./events.js";
import { openPostgresEventTarget } from "./postgres-target.js";

export type EventBus = {
  events: Events;
  transport: "redis" | "postgres" | "memory";
  close(): Promise<void>;
};

export type EventBusOptions = {
  redisUrl?: string;
  /** Set on a real PostgreSQL (not the embedded one): instances sharing it hear each other. */
  postgres?: { connectionString: string; pool: pg.Pool };
  logger: Logger;
};

/**
 * The events of every instance: Redis pub/sub when REDIS_URL is set, else LISTEN/NOTIFY on the shared
 * PostgreSQL, else (embedded database, one process) in memory.
 */
export async function openEventBus({ redisUrl, postgres, logger }: EventBusOptions): Promise<EventBus> {
  if (redisUrl) {
    // A connection in subscriber mode cannot publish, hence two. Publications fail at once while
    // Redis is unreachable (they are lost, and logged); subscriptions are renewed on reconnection.
    const publishClient = new Redis(redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    // ioredis's own resubscription after a reconnection leaves its promise unhandled (a connection
    // lost again before the reply is an unhandled rejection): the channels are resubscribed here.
    const subscribeClient = new Redis(redisUrl, { autoResubscribe: false });
    for (const client of [publishClient, subscribeClient]) {
      client.on("error", (err) => logger.warn({ err }, "event bus redis connection failed"));
    }
    const lost = (what: string) => (err: unknown) => logger.warn({ err }, `event bus: ${what} failed (redis unavailable)`);
    // The target calls these without handling their failure: an unhandled rejection would end the process.
    const publisher = { publish: (channel: string, message: string) => publishClient.publish(channel, message).catch(lost("a publication")) };
    const channels = new Set<string>();
    subscribeClient.on("ready", () => {
      if (channels.size) subscribeClient.subscribe(...channels).catch(lost("a resubscription"));
    });
    const subscriber = new Proxy(subscribeClient, {
      get(target, property) {
        if (property === "subscribe" || property === "unsubscribe") {
          return (...names: string[]) => {
            for (const name of names) {
              if (property === "subscribe") channels.add(name);
              else channels.delete(name);
            }
            return target[property](...names).catch(lost(String(property)));
          };
        }
        const value: unknown = Reflect.get(target, property);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    return {
      events: createEvents(createRedisEventTarget({ publishClient: publisher as unknown as Redis, subscribeClient: subscriber }) as EventTarget),
      transport: "redis",
      async close() {
        subscribeClient.disconnect();
        publishClient.disconnect();
      },
    };
  }
  if (postgres) {
    const target = await openPostgresEventTarget({ ...postgres, logger });
    return { events: createEvents(target), transport: "postgres", close: () => target.close() };
  }
  return { events: createEvents(), transport: "memory", close: async () => undefined };
}
