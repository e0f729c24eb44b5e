import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, newTenant, type TestServer } from "./support/server.js";
import { createUser, rest } from "./support/http.js";
import { completeDeposit, simulateUsdDeposit, userWithUsdAccount } from "./support/deposit-updates.js";
import { subscribeSse, subscribeWs, subscriptionsOf, type Subscriber } from "./support/subscriptions.js";

const DEPOSIT_UPDATED = `subscription ($userId: ID) { depositUpdated(userId: $userId) { id userId status amount currency } }`;

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

const subscriptions = subscriptionsOf(() => server.url);
const overWs = (apiKey: string, variables: Record<string, unknown> = {}) => subscriptions.ws({ "x-api-key": apiKey }, DEPOSIT_UPDATED, variables);
const overSse = (headers: Record<string, string>, variables: Record<string, unknown> = {}) => subscriptions.sse(headers, DEPOSIT_UPDATED, variables);

async function nextDeposit(subscriber: Subscriber) {
  const result = await subscriber.take();
  expect(result.errors).toBeUndefined();
  return result.data.depositUpdated;
}

describe.each([
  { transport: "graphql-ws", subscribe: (tenant: { apiKey: string; headers: Record<string, string> }, variables?: Record<string, unknown>) => overWs(tenant.apiKey, variables) },
  { transport: "SSE", subscribe: (tenant: { apiKey: string; headers: Record<string, string> }, variables?: Record<string, unknown>) => overSse(tenant.headers, variables) },
])("depositUpdated over $transport", ({ subscribe }) => {
  it("delivers a deposit's creation as PENDING, then its completion as COMPLETED, as committed", async () => {
    const tenant = await newTenant(server);
    const userId = await userWithUsdAccount(server, tenant);
    const subscriber = await subscribe(tenant);

    const depositId = await simulateUsdDeposit(server, tenant, userId, 25);
    expect(await nextDeposit(subscriber)).toEqual({ id: depositId, userId, status: "PENDING", amount: "25", currency: "USD" });
    await completeDeposit(server, tenant, depositId);
    expect(await nextDeposit(subscriber)).toEqual({ id: depositId, userId, status: "COMPLETED", amount: "25", currency: "USD" });
  });

  it("delivers only the given user's deposits when userId is set", async () => {
    const tenant = await newTenant(server);
    const watched = await userWithUsdAccount(server, tenant);
    const other = await userWithUsdAccount(server, tenant);
    const subscriber = await subscribe(tenant, { userId: watched });

    await simulateUsdDeposit(server, tenant, other);
    const depositId = await simulateUsdDeposit(server, tenant, watched);
    expect(await nextDeposit(subscriber)).toMatchObject({ id: depositId, userId: watched });
    await subscriber.nothingWithin(300);
  });

  it("never delivers another client's deposits", async () => {
    const owner = await newTenant(server);
    const stranger = await newTenant(server);
    const userId = await userWithUsdAccount(server, owner);
    const ownerSubscriber = await subscribe(owner);
    const strangerSubscriber = await subscribe(stranger);

    const depositId = await simulateUsdDeposit(server, owner, userId);
    expect(await nextDeposit(ownerSubscriber)).toMatchObject({ id: depositId, status: "PENDING" });
    await completeDeposit(server, owner, depositId);
    expect(await nextDeposit(ownerSubscriber)).toMatchObject({ id: depositId, status: "COMPLETED" });
    await strangerSubscriber.nothingWithin(300);
  });

  it("refuses another client's userId as NOT_FOUND, exactly like an unknown one", async () => {
    const owner = await newTenant(server);
    const stranger = await newTenant(server);
    const ownersUser = await createUser(server, owner);

    for (const userId of [ownersUser, crypto.randomUUID()]) {
      const subscriber = await subscribe(stranger, { userId });
      const result = await subscriber.take();
      expect(result.data ?? null).toBeNull();
      expect(result.errors?.map((e) => e.extensions?.code)).toEqual(["NOT_FOUND"]);
      expect(result.errors?.[0].message).toBe("User not found");
    }
  });

  it("refuses a userId that is not a UUID as BAD_USER_INPUT", async () => {
    const tenant = await newTenant(server);
    const subscriber = await subscribe(tenant, { userId: "not-a-uuid" });
    const result = await subscriber.take();
    expect(result.errors?.map((e) => e.extensions?.code)).toEqual(["BAD_USER_INPUT"]);
    expect(result.errors?.[0].message).toMatch(/userId/);
  });
});

describe("depositUpdated authentication", () => {
  it("closes a graphql-ws connection without valid credentials (4403) before any subscription runs", async () => {
    for (const connectionParams of [{}, { "x-api-key": "fpk_000000000000.not-a-real-key-not-a-real-key-not-a-real-key1" }]) {
      const subscriber = subscriptions.track(subscribeWs(server.url, connectionParams, DEPOSIT_UPDATED));
      expect(await subscriber.ended).toMatchObject({ code: 4403 });
    }
  });

  it("stops using a key over graphql-ws once it is revoked (new connections are refused)", async () => {
    const tenant = await newTenant(server);
    const created = await rest(server, "POST", "/v1/api-keys", { headers: tenant.headers });
    await rest(server, "DELETE", `/v1/api-keys/${created.body.id}`, { headers: tenant.headers });
    const subscriber = subscriptions.track(subscribeWs(server.url, { "x-api-key": created.body.key }, DEPOSIT_UPDATED));
    expect(await subscriber.ended).toMatchObject({ code: 4403 });
  });

  it("answers an SSE subscription without credentials with UNAUTHENTICATED and ends the stream", async () => {
    const subscriber = subscriptions.track(await subscribeSse(server.url, {}, DEPOSIT_UPDATED));
    const result = await subscriber.take();
    expect(result.errors?.map((e) => e.extensions?.code)).toEqual(["UNAUTHENTICATED"]);
    expect(await subscriber.ended).toBeUndefined();
  });
});
