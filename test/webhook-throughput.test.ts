import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prismaSql } from "../src/db/sql.js";
import { recordEvent } from "../src/events/log.js";
import { MAX_PENDING_PER_ENDPOINT } from "../src/webhook-endpoints/limits.js";
import { patient } from "./support/patience.js";
import { rest } from "./support/http.js";
import { needs, REQUIREMENTS } from "./support/requirements.js";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";
import { startReceiver, type Receiver } from "./support/webhook-receiver.js";

/**
 * Webhook delivery under load (PostgreSQL: the embedded database runs one transaction at a time).
 * Events are written as the services write them (recordEvent, which queues their deliveries in the
 * same statement), so the test measures delivery rather than the API in front of it.
 */
let server: TestServer;
const receivers: Receiver[] = [];
beforeAll(async () => {
  server = await startServer({ env: { WEBHOOK_DELIVERY: "on" } });
});
afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await server?.stop();
});

/** A healthy receiver: answers 200 to every request, after 200 ms (as one that does some work first). */
const HEALTHY_MS = 200;

async function endpointFor(tenant: Tenant) {
  const receiver = await startReceiver(() => new Promise((resolve) => setTimeout(() => resolve(200), HEALTHY_MS)));
  receivers.push(receiver);
  const res = await rest(server, "POST", "/v1/webhook-endpoints", { headers: tenant.headers, body: { url: receiver.url, events: ["user.created"] } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { id: res.body.id as string, receiver };
}

/** One event of the tenant, committed on its own, as a service would write it. */
const writeEvent = (tenant: Tenant, n: number) =>
  server.app.db.prisma.$transaction((tx) => recordEvent(prismaSql(tx), { clientId: tenant.clientId, type: "user.created", object: { n } }));

/** Distinct webhook-ids a receiver got, each with the time it first arrived. */
function firstArrivals(receiver: Receiver): Map<string, number> {
  const arrivals = new Map<string, number>();
  for (const request of receiver.received) {
    const id = String(request.headers["webhook-id"]);
    if (!arrivals.has(id)) arrivals.set(id, request.at);
  }
  return arrivals;
}

/**
 * Deliveries of the tenant recorded as failed without ever being sent (attempt 0), and those not
 * recorded as delivered, once the worker has written down the answers it got (or 5 s have passed).
 */
async function undelivered(tenant: Tenant) {
  const { prisma } = server.app.db;
  const count = async () => ({
    unsent: await prisma.webhookDeliveryAttempt.count({ where: { clientId: tenant.clientId, attempt: 0 } }),
    notSucceeded: await prisma.webhookDelivery.count({ where: { clientId: tenant.clientId, state: { not: "SUCCEEDED" } } }),
  });
  const deadline = Date.now() + 5000;
  let counts = await count();
  while (counts.notSucceeded > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    counts = await count();
  }
  return counts;
}

describe("webhook delivery under load (PostgreSQL)", needs(REQUIREMENTS.postgres), () => {
  it(`delivers a burst far beyond ${MAX_PENDING_PER_ENDPOINT} waiting deliveries: every event, nothing failed unsent`, async () => {
    const tenant = await newTenant(server);
    const { receiver } = await endpointFor(tenant);
    const burst = MAX_PENDING_PER_ENDPOINT * 2.5;
    // One transaction: all of them wait at once when it commits.
    await server.app.db.prisma.$transaction(async (tx) => {
      for (let n = 0; n < burst; n++) await recordEvent(prismaSql(tx), { clientId: tenant.clientId, type: "user.created", object: { n } });
    }, { timeout: patient(30_000) }); // Prisma's default of 5 s for an interactive transaction is short for 250 inserts on a loaded machine
    await receiver.waitForMessages(burst, 30_000);
    expect(firstArrivals(receiver).size).toBe(burst);
    expect(await undelivered(tenant)).toEqual({ unsent: 0, notSucceeded: 0 });
  });

  it("keeps up with one client writing 50 events/s to two endpoints: every delivery made within 10 s of the last event", async () => {
    const tenant = await newTenant(server);
    const endpoints = [await endpointFor(tenant), await endpointFor(tenant)];
    const perSecond = 50;
    const events = perSecond * 4;
    const started = Date.now();
    const writes: Promise<unknown>[] = [];
    for (let n = 0; n < events; n++) {
      const due = started + (n * 1000) / perSecond;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - Date.now())));
      writes.push(writeEvent(tenant, n));
    }
    await Promise.all(writes);
    const lastWritten = Date.now();
    for (const { receiver } of endpoints) await receiver.waitForMessages(events, 15_000);
    const arrivals = endpoints.map(({ receiver }) => firstArrivals(receiver));
    expect(arrivals.map((arrived) => arrived.size)).toEqual([events, events]);
    const lastArrival = Math.max(...arrivals.flatMap((arrived) => [...arrived.values()]));
    expect(lastArrival - lastWritten, "the last delivery came this long after the last event").toBeLessThanOrEqual(10_000);
    expect(await undelivered(tenant)).toEqual({ unsent: 0, notSucceeded: 0 });
  });
});
