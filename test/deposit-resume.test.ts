import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";
import { rest } from "./support/http.js";
import { completeDeposit, simulateUsdDeposit, userWithUsdAccount } from "./support/deposit-updates.js";
import { waitForEvents } from "./support/events.js";
import { subscriptionsOf, type Subscriber } from "./support/subscriptions.js";

const DEPOSIT_UPDATED = `subscription ($userId: ID, $after: ID) { depositUpdated(userId: $userId, after: $after) { id status eventCursor } }`;
const DEPOSIT_TYPES = "&type=deposit.created&type=deposit.completed&type=deposit.failed";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

const subscriptions = subscriptionsOf(() => server.url);

type Transport = (tenant: Tenant, variables: Record<string, unknown>, headers?: Record<string, string>) => Promise<Subscriber>;
const overWs: Transport = (tenant, variables) => subscriptions.ws({ "x-api-key": tenant.apiKey }, DEPOSIT_UPDATED, variables);
const overSse: Transport = (tenant, variables, headers = {}) => subscriptions.sse({ ...tenant.headers, ...headers }, DEPOSIT_UPDATED, variables);

async function next(subscriber: Subscriber) {
  const result = await subscriber.take(10_000);
  expect(result.errors).toBeUndefined();
  return { ...(result.data.depositUpdated as { id: string; status: string; eventCursor: string }), sseId: result.sseId };
}

const failDeposit = async (tenant: Tenant, id: string) =>
  expect((await rest(server, "POST", `/v1/sandbox/deposits/${id}/fail`, { headers: tenant.headers, body: { reason: "returned" } })).status).toBe(200);

describe.each([
  { transport: "graphql-ws", subscribe: overWs },
  { transport: "SSE", subscribe: overSse },
])("depositUpdated with after, over $transport", ({ subscribe }) => {
  it("replays what happened while disconnected from the last eventCursor, then continues live, without gap or repeat", async () => {
    const tenant = await newTenant(server);
    const userId = await userWithUsdAccount(server, tenant);
    const first = await subscribe(tenant, { userId });
    const a = await simulateUsdDeposit(server, tenant, userId, 10);
    const seen = await next(first);
    expect(seen).toMatchObject({ id: a, status: "PENDING" });
    first.close();

    // While the subscriber is away: a completes, b arrives and fails.
    await completeDeposit(server, tenant, a);
    const b = await simulateUsdDeposit(server, tenant, userId, 20);
    await failDeposit(tenant, b);

    const resumed = await subscribe(tenant, { userId, after: seen.eventCursor });
    const replayed = [await next(resumed), await next(resumed), await next(resumed)];
    expect(replayed.map(({ id, status }) => [id, status])).toEqual([[a, "COMPLETED"], [b, "PENDING"], [b, "FAILED"]]);
    const c = await simulateUsdDeposit(server, tenant, userId, 30);
    const live = await next(resumed);
    expect([live.id, live.status]).toEqual([c, "PENDING"]);
    await resumed.nothingWithin(300);

    // Every payload's eventCursor is the id of its event in the log.
    const log = await waitForEvents(server, tenant, 5, DEPOSIT_TYPES);
    expect([seen, ...replayed, live].map((p) => p.eventCursor)).toEqual(log.map((e) => e.id));
  });

  it("loses nothing and repeats nothing when deposits change while it resumes", async () => {
    const tenant = await newTenant(server);
    const userId = await userWithUsdAccount(server, tenant);
    const start = await simulateUsdDeposit(server, tenant, userId, 1);
    const [startEvent] = await waitForEvents(server, tenant, 1, DEPOSIT_TYPES);
    expect(startEvent.data.object.id).toBe(start);

    // Deposits arrive after the cursor, then keep arriving while the subscription opens.
    const before = [await simulateUsdDeposit(server, tenant, userId, 2), await simulateUsdDeposit(server, tenant, userId, 3)];
    const arriving = Promise.all(Array.from({ length: 6 }, (_, i) => new Promise((r) => setTimeout(r, i * 60)).then(() => simulateUsdDeposit(server, tenant, userId, 4 + i))));
    const resumed = await subscribe(tenant, { userId, after: startEvent.id });
    const ids = [...before, ...(await arriving)];
    const received = [];
    for (let i = 0; i < ids.length; i++) received.push(await next(resumed));
    await resumed.nothingWithin(300);
    const log = await waitForEvents(server, tenant, ids.length + 1, DEPOSIT_TYPES);
    expect(received.map((p) => p.eventCursor)).toEqual(log.slice(1).map((e) => e.id));
    expect(new Set(received.map((p) => p.id))).toEqual(new Set(ids));
  });

  it("refuses an after that is not an event id as BAD_USER_INPUT", async () => {
    const tenant = await newTenant(server);
    const subscriber = await subscribe(tenant, { after: "yesterday" });
    const result = await subscriber.take().catch(() => undefined);
    const code = result?.errors?.[0]?.extensions?.code ?? (await subscriber.ended as { message?: string } | undefined)?.message;
    expect(JSON.stringify(result ?? code)).toContain("BAD_USER_INPUT");
  });
});

describe("depositUpdated over SSE", () => {
  it("sends each payload's event id in the id: line and resumes from the Last-Event-ID header", async () => {
    const tenant = await newTenant(server);
    const userId = await userWithUsdAccount(server, tenant);
    const first = await overSse(tenant, { userId });
    const a = await simulateUsdDeposit(server, tenant, userId, 10);
    const seen = await next(first);
    expect(seen.sseId).toBe(seen.eventCursor);
    first.close();
    await completeDeposit(server, tenant, a);

    const resumed = await overSse(tenant, { userId }, { "last-event-id": seen.sseId! });
    const replayed = await next(resumed);
    expect([replayed.id, replayed.status]).toEqual([a, "COMPLETED"]);
    expect(replayed.sseId).toBe(replayed.eventCursor);
    await resumed.nothingWithin(300);
  });
});
