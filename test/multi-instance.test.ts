import net from "node:net";
import { Writable } from "node:stream";
import pg from "pg";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "../src/db/database.js";
import { createClientWithKey } from "../src/keys/first-key.js";
import { ApiKeyService } from "../src/keys/service.js";
import { createLogger } from "../src/logger.js";
import { openEventBus, type EventBus } from "../src/pubsub/bus.js";
import { createEvents, type DepositEvent, type Events } from "../src/pubsub/events.js";
import { LISTENER_APPLICATION_NAME, openPostgresEventTarget } from "../src/pubsub/postgres-target.js";
import { testDatabaseUrl, type Tenant, type TestServer } from "./support/server.js";
import { needs, REQUIREMENTS } from "./support/requirements.js";
import { completeDeposit, simulateUsdDeposit, userWithUsdAccount } from "./support/deposit-updates.js";
import { startServerProcess, type ServerProcess } from "./support/server-process.js";
import { subscribeWs, settle } from "./support/subscriptions.js";
import { startTcpProxy } from "./support/tcp-proxy.js";

const redisUrl = process.env.TEST_REDIS_URL || "redis://127.0.0.1:6379";
const redisMissing = (await isReachable(redisUrl)) ? undefined : `needs Redis reachable at ${redisUrl} (TEST_REDIS_URL)`;

const event = (overrides: Partial<DepositEvent> = {}): DepositEvent => ({
  clientId: crypto.randomUUID(),
  userId: crypto.randomUUID(),
  depositId: crypto.randomUUID(),
  status: "PENDING",
  ...overrides,
});

/**
 * The next event that `matches`: other test files publish deposits on the same database meanwhile,
 * so a test waits for its own event, not for the first one on the channel.
 */
function nextEvent(events: Events, matches: (event: DepositEvent) => boolean, timeoutMs = 3000): { received: Promise<DepositEvent> } {
  const iterator = events.subscribe("deposit")[Symbol.asyncIterator]();
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error("no event received")), timeoutMs));
  const own = (async () => {
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) if (matches(next.value)) return next.value as DepositEvent;
    throw new Error("no event received");
  })();
  const received = Promise.race([own, timeout]).finally(() => void iterator.return?.());
  received.catch(() => undefined);
  return { received };
}

async function isReachable(url: string): Promise<boolean> {
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on("error", () => undefined);
  try {
    await probe.connect();
    return (await probe.ping()) === "PONG";
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

/** A TCP relay to PostgreSQL that can go silent without closing anything, as a firewall that drops a connection does. */
async function silenceableRelay(target: URL) {
  let silent = false;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("error", () => undefined);
      socket.on("close", () => (client.destroy(), upstream.destroy()));
    }
    client.on("data", (data) => silent || upstream.write(data));
    upstream.on("data", (data) => silent || client.write(data));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = new URL(target.toString());
  url.hostname = "127.0.0.1";
  url.port = String((server.address() as net.AddressInfo).port);
  return {
    url: url.toString(),
    silence: () => void (silent = true),
    close: () => {
      sockets.forEach((socket) => socket.destroy());
      server.close();
    },
  };
}

describe("events across instances (PostgreSQL)", needs(REQUIREMENTS.postgres), () => {
  const logs: string[] = [];
  const logger = createLogger("info", new Writable({ write: (chunk, _encoding, done) => void (logs.push(String(chunk)), done()) }));
  let pool: pg.Pool;
  beforeAll(() => {
    pool = new pg.Pool({ connectionString: testDatabaseUrl, max: 2 });
  });
  afterAll(() => pool?.end());

  const openPostgresBus = () =>
    openEventBus({ postgres: { connectionString: testDatabaseUrl!, pool }, logger }).then((bus) => {
      expect(bus.transport).toBe("postgres");
      return bus;
    });

  it("delivers an event published on one LISTEN/NOTIFY bus to subscribers of another, and to its own", async () => {
    const [publisher, subscriber] = [await openPostgresBus(), await openPostgresBus()];
    try {
      const published = event();
      const remote = nextEvent(subscriber.events, (e) => e.depositId === published.depositId);
      const local = nextEvent(publisher.events, (e) => e.depositId === published.depositId);
      publisher.events.publish("deposit", published);
      expect(await remote.received).toEqual(published);
      expect(await local.received).toEqual(published);
    } finally {
      await Promise.all([publisher.close(), subscriber.close()]);
    }
  });

  it("delivers to the publishing instance's own subscribers exactly once (its own NOTIFY is not delivered again)", async () => {
    const [publisher, observer] = [await openPostgresBus(), await openPostgresBus()];
    const iterator = publisher.events.subscribe("deposit")[Symbol.asyncIterator]();
    try {
      const published = event();
      const received: DepositEvent[] = [];
      const collecting = (async () => {
        for (let next = await iterator.next(); !next.done; next = await iterator.next()) if (next.value.depositId === published.depositId) received.push(next.value);
      })();
      const observed = nextEvent(observer.events, (e) => e.depositId === published.depositId);
      publisher.events.publish("deposit", published);
      // Once another instance has heard the NOTIFY, the publisher has heard its own as well.
      await observed.received;
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(received).toEqual([published]);
      await iterator.return?.();
      await collecting;
    } finally {
      await Promise.all([publisher.close(), observer.close()]);
    }
  });

  it("publishes while every pooled connection is taken (the listening connection sends the NOTIFY)", async () => {
    const [publisher, subscriber] = [await openPostgresBus(), await openPostgresBus()];
    const held = await Promise.all([pool.connect(), pool.connect()]);
    try {
      const published = event();
      const remote = nextEvent(subscriber.events, (e) => e.depositId === published.depositId);
      publisher.events.publish("deposit", published);
      expect(await remote.received).toEqual(published);
    } finally {
      held.forEach((client) => client.release());
      await Promise.all([publisher.close(), subscriber.close()]);
    }
  });

  it("publishes through the pool when its listening connection stops answering, and still closes in time", async () => {
    const relay = await silenceableRelay(new URL(testDatabaseUrl!));
    const target = await openPostgresEventTarget({ connectionString: relay.url, pool, logger, reconnectDelayMs: 60_000 });
    const subscriber = await openPostgresBus();
    try {
      relay.silence();
      const published = event();
      const remote = nextEvent(subscriber.events, (e) => e.depositId === published.depositId, 6000);
      createEvents(target).publish("deposit", published);
      expect(await remote.received).toEqual(published);
      const closing = performance.now();
      await target.close();
      expect(performance.now() - closing).toBeLessThan(4000);
    } finally {
      await subscriber.close();
      relay.close();
    }
  }, 20_000);

  it("closes in time while a publish hangs on a database that stopped answering", async () => {
    const relay = await silenceableRelay(new URL(testDatabaseUrl!));
    const silentPool = new pg.Pool({ connectionString: relay.url, max: 1 });
    const target = await openPostgresEventTarget({ connectionString: relay.url, pool: silentPool, logger, reconnectDelayMs: 60_000 });
    try {
      await silentPool.query("SELECT 1");
      relay.silence();
      createEvents(target).publish("deposit", event());
      const closing = performance.now();
      await target.close();
      expect(performance.now() - closing).toBeLessThan(4000);
    } finally {
      relay.close();
      await silentPool.end().catch(() => undefined);
    }
  }, 20_000);

  it("keeps the order of one instance's publishes", async () => {
    const [publisher, subscriber] = [await openPostgresBus(), await openPostgresBus()];
    try {
      const iterator = subscriber.events.subscribe("deposit")[Symbol.asyncIterator]();
      const first = iterator.next();
      const published = Array.from({ length: 20 }, (_, i) => event({ status: `S${i}` }));
      const ours = new Set(published.map((e) => e.depositId));
      published.forEach((e) => publisher.events.publish("deposit", e));
      const received: DepositEvent[] = [];
      let next = await first;
      while (true) {
        if (ours.has(next.value.depositId)) received.push(next.value);
        if (received.length === published.length) break;
        next = await iterator.next();
      }
      expect(received).toEqual(published);
      await iterator.return?.();
    } finally {
      await Promise.all([publisher.close(), subscriber.close()]);
    }
  });

  it("re-opens a lost listening connection and hears events again", async () => {
    const publisher = await openPostgresBus();
    const target = await openPostgresEventTarget({ connectionString: testDatabaseUrl!, pool, logger, reconnectDelayMs: 50 });
    const subscriber = createEvents(target);
    try {
      const killed = await pool.query<{ pid: number }>(
        "SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()",
        [LISTENER_APPLICATION_NAME],
      );
      expect(killed.rowCount).toBeGreaterThan(0);
      const killedPids = killed.rows.map((r) => r.pid);
      await pool.query("SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid", [killedPids]);

      // Back once each re-opened connection has run its LISTEN (connected is not enough: a NOTIFY before it is not heard).
      // A terminated backend can still be listed for a moment: only new ones count.
      await expect.poll(async () => {
        const listeners = await pool.query(
          "SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database() AND state = 'idle' AND query ILIKE 'LISTEN%' AND pid <> ALL($2::int[])",
          [LISTENER_APPLICATION_NAME, killedPids],
        );
        return listeners.rowCount;
      }, { timeout: 5000 }).toBe(killed.rowCount);
      const published = event();
      const received = nextEvent(subscriber, (e) => e.depositId === published.depositId);
      publisher.events.publish("deposit", published);
      expect(await received.received).toEqual(published);
      expect(logs.join("")).toContain("event listener connection lost");
    } finally {
      await Promise.all([publisher.close(), target.close()]);
    }
  });

  it("refuses to publish an event too large for NOTIFY, and says so in the log", async () => {
    const bus = await openPostgresBus();
    try {
      const tooLarge = event({ status: "X".repeat(8000) });
      const received = nextEvent(bus.events, (e) => e.depositId === tooLarge.depositId, 500);
      bus.events.publish("deposit", tooLarge);
      await expect(received.received).rejects.toThrow("no event received");
      expect(logs.join("")).toContain("event too large to publish");
    } finally {
      await bus.close();
    }
  });
});

describe("events across instances (Redis)", needs(redisMissing), () => {
  it("delivers an event published on one Redis bus to subscribers of another", async () => {
    const logger = createLogger("silent");
    const buses: EventBus[] = [await openEventBus({ redisUrl, logger }), await openEventBus({ redisUrl, logger })];
    try {
      expect(buses.map((bus) => bus.transport)).toEqual(["redis", "redis"]);
      const published = event();
      const received = nextEvent(buses[1].events, (e) => e.depositId === published.depositId);
      await settle(); // the first local subscriber SUBSCRIBEs to the channel
      buses[0].events.publish("deposit", published);
      expect(await received.received).toEqual(published);
    } finally {
      await Promise.all(buses.map((bus) => bus.close()));
    }
  });

  it("subscribes again after its Redis connection was lost, and events reach its subscribers once more", async () => {
    const logger = createLogger("silent");
    const target = new URL(redisUrl);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
    const throughProxy = new URL(redisUrl);
    throughProxy.port = String(proxy.port);
    const [listening, publishing] = [await openEventBus({ redisUrl: throughProxy.toString(), logger }), await openEventBus({ redisUrl, logger })];
    const heard: string[] = [];
    const iterator = listening.events.subscribe("deposit")[Symbol.asyncIterator]();
    const collecting = (async () => {
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) heard.push(next.value.depositId);
    })();
    try {
      await settle();
      await proxy.cut();
      await proxy.restore();
      // Published until the reconnected bus hears one (bounded): it hears nothing unless it subscribed again.
      const sent: string[] = [];
      for (let attempt = 0; attempt < 50 && !heard.some((id) => sent.includes(id)); attempt++) {
        const published = event();
        sent.push(published.depositId);
        publishing.events.publish("deposit", published);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(heard.filter((id) => sent.includes(id)).length).toBeGreaterThan(0);
    } finally {
      await iterator.return?.();
      await collecting;
      await Promise.all([listening.close(), publishing.close()]);
      await proxy.close();
    }
  });
});

describe.each([
  { transport: "PostgreSQL LISTEN/NOTIFY", env: {} as Record<string, string>, missing: undefined },
  { transport: "Redis", env: { REDIS_URL: redisUrl }, missing: redisMissing },
])("two server processes on one database, events over $transport", needs(REQUIREMENTS.postgres), ({ env, missing }) => {
  let db: Database;
  let keys: ApiKeyService;
  let instanceA: ServerProcess;
  let instanceB: ServerProcess;

  beforeAll(async () => {
    if (missing) return;
    db = await openDatabase({ url: testDatabaseUrl, logger: createLogger("silent") });
    keys = new ApiKeyService(db.prisma);
    const shared = { DATABASE_URL: testDatabaseUrl!, ...env };
    [instanceA, instanceB] = await Promise.all([startServerProcess(shared), startServerProcess(shared)]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([instanceA?.stop(), instanceB?.stop()]);
    await db?.close();
  });

  /** The HTTP helpers read only `url`, so a server process stands in for an in-process test server. */
  const overHttp = (instance: ServerProcess) => instance as unknown as TestServer;

  async function newTenant(): Promise<Tenant> {
    const { client, apiKey } = await createClientWithKey(db.prisma, keys, { email: `multi-${crypto.randomUUID()}@example.com` });
    return { clientId: client.id, apiKey: apiKey.key, headers: { "x-api-key": apiKey.key } };
  }

  it("a deposit created and completed through instance A reaches a subscriber on instance B", needs(missing), async () => {
    const tenant = await newTenant();
    const a = overHttp(instanceA);
    const userId = await userWithUsdAccount(a, tenant);
    const subscriber = subscribeWs(instanceB.url, { "x-api-key": tenant.apiKey }, "subscription { depositUpdated { id status } }");
    try {
      await settle();
      const depositId = await simulateUsdDeposit(a, tenant, userId);
      expect((await subscriber.take()).data).toEqual({ depositUpdated: { id: depositId, status: "PENDING" } });
      await completeDeposit(a, tenant, depositId);
      expect((await subscriber.take()).data).toEqual({ depositUpdated: { id: depositId, status: "COMPLETED" } });
    } finally {
      subscriber.close();
    }
  });

  it("an API key revoked through instance A is refused at once by A and within a second by B, which had it cached", needs(missing), async () => {
    const tenant = await newTenant();
    const headers = { ...tenant.headers, "content-type": "application/json" };
    const created = await (await fetch(`${instanceA.url}/v1/api-keys`, { method: "POST", headers })).json();
    const second = { "x-api-key": created.key as string };
    for (const instance of [instanceA, instanceB]) expect((await fetch(`${instance.url}/v1/api-keys`, { headers: second })).status).toBe(200);

    const revokedAt = Date.now();
    expect((await fetch(`${instanceA.url}/v1/api-keys/${created.id}`, { method: "DELETE", headers })).status).toBe(200);
    expect((await fetch(`${instanceA.url}/v1/api-keys`, { headers: second })).status).toBe(401);
    let status = 200;
    while (status !== 401 && Date.now() - revokedAt < 2000) {
      status = (await fetch(`${instanceB.url}/v1/api-keys`, { headers: second })).status;
    }
    expect(status).toBe(401);
    expect(Date.now() - revokedAt).toBeLessThan(1100);
  });
});
