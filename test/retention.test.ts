import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { needs, REQUIREMENTS } from "./support/requirements.js";
import pg from "pg";
import { newTenant, startServer, testDatabaseUrl, type Tenant, type TestServer } from "./support/server.js";
import { createUser } from "./support/http.js";
import { fund } from "./support/ledger.js";

const DAY_MS = 24 * 60 * 60_000;
const ago = (ms: number) => new Date(Date.now() - ms);

let server: TestServer;
beforeAll(async () => {
  // Batches of 2, so that every rule below deletes over several batches.
  server = await startServer({ env: { RETENTION_BATCH: "2" } });
});
afterAll(() => server?.stop());

const prisma = () => server.app.db.prisma;
let eventNumber = 0;

/** An event of the tenant written `age` ago, with one delivery in `state` (and its attempt) when given. */
async function eventOf(tenant: Tenant, age: number, delivery?: { endpointId: string; state: "PENDING" | "SUCCEEDED" | "FAILED" }) {
  const id = `evt_retention_${process.pid}_${eventNumber++}_${crypto.randomUUID()}`;
  await prisma().event.create({ data: { id, xid: 1n, clientId: tenant.clientId, type: "user.created", data: { object: {} }, createdAt: ago(age) } });
  if (delivery) {
    const row = await prisma().webhookDelivery.create({
      data: { clientId: tenant.clientId, eventId: id, endpointId: delivery.endpointId, state: delivery.state, createdAt: ago(age), nextAttemptAt: null },
    });
    await prisma().webhookDeliveryAttempt.create({
      data: { deliveryId: row.id, clientId: tenant.clientId, endpointId: delivery.endpointId, eventId: id, attempt: 1, succeeded: delivery.state === "SUCCEEDED", durationMs: 5, createdAt: ago(age) },
    });
  }
  return id;
}

describe("retention", () => {
  it("deletes each kind of row past its age, in batches, and keeps what is young or still referred to", async () => {
    const tenant = await newTenant(server);
    const { clientId } = tenant;
    const endpoint = await server.app.services.webhookEndpoints.create({ clientId, permissions: null }, { url: "https://hooks.example.com/retention" });
    const oldDelivered = await Promise.all([1, 2, 3].map(() => eventOf(tenant, 31 * DAY_MS, { endpointId: endpoint.id, state: "SUCCEEDED" })));
    const oldUndelivered = await eventOf(tenant, 31 * DAY_MS);
    const oldPending = await eventOf(tenant, 31 * DAY_MS, { endpointId: endpoint.id, state: "PENDING" });
    const recent = await eventOf(tenant, 29 * DAY_MS, { endpointId: endpoint.id, state: "FAILED" });

    const record = (key: string, age: number) =>
      prisma().idempotencyRecord.create({ data: { clientId, key, requestHash: "h", state: "COMPLETED", result: "x", createdAt: ago(age), expiresAt: ago(age - DAY_MS) } });
    await Promise.all([record("old-1", 2 * DAY_MS), record("old-2", 2 * DAY_MS), record("old-3", 2 * DAY_MS), record("young", 60_000)]);

    // Quotes: one unused and one redeemed by a conversion, both expired two days ago.
    const userId = await createUser(server, tenant);
    await fund(server, clientId, userId, "USD", "100");
    const unused = await server.app.services.conversion.quote(clientId, { from: "USD", to: "EUR", amount: "10" });
    const redeemed = await server.app.services.conversion.quote(clientId, { from: "USD", to: "EUR", amount: "10" });
    await server.app.services.conversion.convert(clientId, { from: "USD", to: "EUR", amount: "10", userId, quoteId: redeemed.id });
    await prisma().conversionQuote.updateMany({ where: { id: { in: [unused.id, redeemed.id] } }, data: { expiresAt: ago(2 * DAY_MS) } });

    const email = `retention-${crypto.randomUUID()}@example.com`;
    const otp = (age: number) => prisma().otpCode.create({ data: { email, codeHash: "h", expiresAt: ago(age - 600_000), createdAt: ago(age) } });
    await Promise.all([otp(3 * DAY_MS), otp(3 * DAY_MS), otp(3 * DAY_MS), otp(2 * 3_600_000)]);

    const session = (expiresAt: Date, revokedAt: Date | null = null) => prisma().session.create({ data: { id: crypto.randomUUID(), clientId, expiresAt, revokedAt } });
    const [expired, live, revokedLive] = await Promise.all([session(ago(8 * DAY_MS)), session(new Date(Date.now() + DAY_MS)), session(new Date(Date.now() + DAY_MS), new Date())]);

    const key = (revokedAt: Date | null) =>
      prisma().apiKey.create({ data: { clientId, prefix: `rt_${crypto.randomUUID()}`, hash: crypto.randomUUID(), revokedAt } });
    const [longRevoked, justRevoked, active] = await Promise.all([key(ago(31 * DAY_MS)), key(ago(DAY_MS)), key(null)]);

    const deleted = await server.app.services.retention.runOnce();
    expect(deleted).not.toBeNull();

    const events = (await prisma().event.findMany({ where: { clientId }, select: { id: true } })).map((e) => e.id);
    for (const id of [...oldDelivered, oldUndelivered]) expect(events, `old event ${id}`).not.toContain(id);
    expect(events, "an event with a delivery still pending stays").toContain(oldPending);
    expect(events).toContain(recent);
    expect(await prisma().webhookDelivery.count({ where: { eventId: { in: oldDelivered } } })).toBe(0);
    expect(await prisma().webhookDeliveryAttempt.count({ where: { eventId: { in: [...oldDelivered, oldPending] } } }), "attempts past 30 days go").toBe(0);
    expect(await prisma().webhookDeliveryAttempt.count({ where: { eventId: recent } })).toBe(1);

    expect((await prisma().idempotencyRecord.findMany({ where: { clientId }, select: { key: true } })).map((r) => r.key)).toEqual(["young"]);
    const quotes = (await prisma().conversionQuote.findMany({ where: { clientId }, select: { id: true } })).map((q) => q.id);
    expect(quotes, "the quote a conversion refers to stays").toEqual([redeemed.id]);
    expect(await prisma().otpCode.count({ where: { email } })).toBe(1);
    const sessions = (await prisma().session.findMany({ where: { clientId }, select: { id: true } })).map((s) => s.id).sort();
    expect(sessions).toEqual([live.id, revokedLive.id].sort());
    expect(sessions).not.toContain(expired.id);
    const keys = (await prisma().apiKey.findMany({ where: { clientId }, select: { id: true } })).map((k) => k.id);
    expect(keys).not.toContain(longRevoked.id);
    expect(keys).toEqual(expect.arrayContaining([justRevoked.id, active.id]));
    // The tenant's own key still works: nothing live was touched.
    expect((await fetch(`${server.url}/v1/user`, { headers: tenant.headers })).status).toBe(200);
  });

  it("deletes nothing while another instance holds the retention lock (PostgreSQL)", needs(REQUIREMENTS.postgres), async () => {
    const email = `retention-lock-${crypto.randomUUID()}@example.com`;
    await prisma().otpCode.create({ data: { email, codeHash: "h", expiresAt: ago(3 * DAY_MS), createdAt: ago(3 * DAY_MS) } });
    const holder = new pg.Client({ connectionString: testDatabaseUrl });
    await holder.connect();
    try {
      await holder.query("SELECT pg_advisory_lock(7318204461)");
      expect(await server.app.services.retention.runOnce()).toBeNull();
      expect(await prisma().otpCode.count({ where: { email } })).toBe(1);
      await holder.query("SELECT pg_advisory_unlock_all()");
      expect(await server.app.services.retention.runOnce()).not.toBeNull();
      expect(await prisma().otpCode.count({ where: { email } })).toBe(0);
    } finally {
      await holder.end();
    }
  });
});
