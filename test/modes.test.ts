import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClientWithKey } from "../src/keys/first-key.js";
import { newVirtualAccount } from "./support/deposits.js";
import { createUser, errorCodes, gql, rest } from "./support/http.js";
import { startServer, type Tenant, type TestServer } from "./support/server.js";
import { subscriptionsOf } from "./support/subscriptions.js";
import { until } from "./support/until.js";
import { startReceiver, type Receiver } from "./support/webhook-receiver.js";
import { balanceOf, fundedUser, USDC_ADDRESS } from "./support/withdrawals.js";

// SPEC §15: one business, two modes. Each mode is a tenant of its own, so the other mode's ids are
// exactly another tenant's (404 / NOT_FOUND, absent from lists) on every transport: REST, GraphQL over
// HTTP, graphql-ws, SSE, and webhooks (an endpoint receives only its mode's events).
let server: TestServer;
let receivers: Receiver[] = [];
const subscriptions = subscriptionsOf(() => server.url);

beforeAll(async () => {
  server = await startServer({ env: { WEBHOOK_DELIVERY: "on", WEBHOOK_RETRY_SCHEDULE: "100ms" } });
});

afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await server?.stop();
});

/** One business's test and live keys. */
async function business(): Promise<Record<"test" | "live", Tenant>> {
  const email = `modes-${randomUUID()}@example.com`;
  const make = async (mode: "test" | "live") => {
    const { client, apiKey } = await createClientWithKey(server.app.db.prisma, server.app.services.keys, { email, mode });
    return { clientId: client.id, apiKey: apiKey.key, headers: { "x-api-key": apiKey.key } };
  };
  return { test: await make("test"), live: await make("live") };
}

describe("keys say their mode", () => {
  it("a test key starts fpk_test_, a live key fpk_live_; both belong to one business and act in two tenants", async () => {
    const { test, live } = await business();
    expect(test.apiKey).toMatch(/^fpk_test_[0-9a-f]{12}\./);
    expect(live.apiKey).toMatch(/^fpk_live_[0-9a-f]{12}\./);
    expect(test.clientId).not.toBe(live.clientId);
    const rows = await server.app.db.prisma.client.findMany({ where: { id: { in: [test.clientId, live.clientId] } } });
    expect(new Set(rows.map((row) => row.accountId)).size).toBe(1);
  });

  it("a key naming the other mode in x-mode is refused (403), and an unknown mode is 400", async () => {
    const { test } = await business();
    const other = await rest(server, "GET", "/v1/user", { headers: { ...test.headers, "x-mode": "live" } });
    expect(other.status).toBe(403);
    const bad = await rest(server, "GET", "/v1/user", { headers: { ...test.headers, "x-mode": "production" } });
    expect(bad.status).toBe(400);
    expect(bad.body.param).toBe("x-mode");
  });
});

describe("the other mode is another tenant", () => {
  it.each([
    ["test", "live"],
    ["live", "test"],
  ] as const)("a %s user is unknown to the %s key on REST and GraphQL, and absent from its lists and events", async (owner, reader) => {
    const keys = await business();
    const userId = await createUser(server, keys[owner]);
    const restLookup = await rest(server, "GET", `/v1/user/${userId}`, { headers: keys[reader].headers });
    expect(restLookup.status).toBe(404);
    const graphqlLookup = await gql(server, "query ($id: ID!) { user(id: $id) { id } }", { id: userId }, keys[reader].headers);
    expect(graphqlLookup.body.data?.user ?? null).toBeNull();
    const listed = await rest(server, "GET", "/v1/user", { headers: keys[reader].headers });
    expect(JSON.stringify(listed.body)).not.toContain(userId);
    const events = await rest(server, "GET", "/v1/events", { headers: keys[reader].headers });
    expect(events.status).toBe(200);
    expect(JSON.stringify(events.body)).not.toContain(userId);
    const own = await rest(server, "GET", "/v1/events", { headers: keys[owner].headers });
    const created = (own.body.data as { type: string; livemode: boolean; data: { object: { id?: string; livemode?: boolean } } }[]).find((event) => event.data.object.id === userId);
    expect(created?.livemode).toBe(owner === "live");
    expect(created?.data.object.livemode).toBe(owner === "live");
  });

  it.each(["ws", "sse"] as const)("a subscription over %s to the other mode's user is refused as unknown", async (transport) => {
    const keys = await business();
    const userId = await createUser(server, keys.test);
    const query = "subscription ($userId: ID!) { depositUpdated(userId: $userId) { id status } }";
    const subscriber = transport === "ws" ? await subscriptions.ws(keys.live.headers, query, { userId }) : await subscriptions.sse(keys.live.headers, query, { userId });
    const first = await subscriber.take(10_000);
    expect(first.errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
  });

  it("a webhook endpoint receives only its own mode's events, each saying its mode", async () => {
    const keys = await business();
    const [testReceiver, liveReceiver] = await Promise.all([startReceiver(), startReceiver()]);
    receivers.push(testReceiver, liveReceiver);
    for (const [mode, receiver] of [["test", testReceiver], ["live", liveReceiver]] as const) {
      const endpoint = await rest(server, "POST", "/v1/webhook-endpoints", { headers: keys[mode].headers, body: { url: receiver.url } });
      expect(endpoint.status, JSON.stringify(endpoint.body)).toBeLessThan(300);
    }
    const testUser = await createUser(server, keys.test);
    const liveUser = await createUser(server, keys.live);
    const bodies = (receiver: Receiver) => receiver.received.map((request) => JSON.parse(request.body) as { livemode: boolean; data: { object: { id?: string } } });
    await until(async () => (bodies(testReceiver).some((b) => b.data.object.id === testUser) && bodies(liveReceiver).some((b) => b.data.object.id === liveUser) ? true : undefined), "both endpoints' user events");
    expect(bodies(testReceiver).every((body) => body.livemode === false && body.data.object.id !== liveUser)).toBe(true);
    expect(bodies(liveReceiver).every((body) => body.livemode === true && body.data.object.id !== testUser)).toBe(true);
  });
});

describe("live mode simulates nothing", () => {
  it("refuses a USDC withdrawal, a USDC account and a forwarding virtual account on a network that is not live (400 naming it), debiting nothing", async () => {
    const { live } = await business();
    const userId = await fundedUser(server, live, "USDC", "50");
    const withdrawal = await rest(server, "POST", "/v1/withdrawals/usdc", { headers: live.headers, body: { userId, amount: 5, walletAddress: USDC_ADDRESS, network: "BASE", chainId: 8453 } });
    expect(withdrawal.status).toBe(400);
    expect(withdrawal.body.param).toBe("network");
    expect(await balanceOf(server, live, userId, "USDC")).toBe("50");
    const account = await rest(server, "POST", `/v1/accounts/usdc/${userId}`, { headers: live.headers, body: { chainType: "BASE" } });
    expect(account.status).toBe(400);
    expect(account.body.param).toBe("chainType");
    const virtual = await rest(server, "POST", "/v1/virtual-account/NGN", { headers: live.headers, body: { userId, destinationNetwork: "POLYGON" } });
    expect(virtual.status).toBe(400);
    expect(virtual.body.param).toBe("destinationNetwork");
  });

  it("the same requests work in test mode, where the networks are simulated", async () => {
    const { test } = await business();
    const userId = await fundedUser(server, test, "USDC", "50");
    const withdrawal = await rest(server, "POST", "/v1/withdrawals/usdc", { headers: test.headers, body: { userId, amount: 5, walletAddress: USDC_ADDRESS, network: "BASE", chainId: 8453 } });
    expect(withdrawal.status, JSON.stringify(withdrawal.body)).toBe(200);
    await newVirtualAccount(server, test, userId, "NGN", { destinationNetwork: "POLYGON" });
  });

  it.each([
    ["POST", "/v1/sandbox/deposits", { currency: "NGN", amount: 1000 }],
    ["POST", "/v1/sandbox/card-transactions", { amount: 3.5, description: "Coffee" }],
    ["POST", "/v1/sandbox/withdrawals/wd_000000000000000000000000/complete", undefined],
  ])("%s %s answers 403 TEST_MODE_ONLY to a live key", async (method, path, fields) => {
    const { live } = await business();
    const userId = await createUser(server, live);
    const res = await rest(server, method, path, { headers: live.headers, body: fields && { userId, ...fields } });
    expect(res.status, JSON.stringify(res.body)).toBe(403);
    expect(res.body.code).toBe("TEST_MODE_ONLY");
  });

  it("a GraphQL simulation answers TEST_MODE_ONLY to a live key", async () => {
    const { live } = await business();
    const userId = await createUser(server, live);
    const res = await gql(server, "mutation ($input: SimulateDepositInput!) { simulateDeposit(input: $input) { id } }", { input: { userId, currency: "NGN", amount: 1000 } }, live.headers);
    expect(errorCodes(res)).toEqual(["TEST_MODE_ONLY"]);
  });
});

describe("cancelling a withdrawal", () => {
  it("PENDING → CANCELLED gives the amount and fee back once; a second cancel, or one after PROCESSING, is 409", async () => {
    const { test } = await business();
    const userId = await fundedUser(server, test, "USDC", "50");
    const withdrawal = await rest(server, "POST", "/v1/withdrawals/usdc", { headers: test.headers, body: { userId, amount: 5, developerFee: 1, walletAddress: USDC_ADDRESS, network: "BASE", chainId: 8453 } });
    expect(withdrawal.status).toBe(200);
    expect(await balanceOf(server, test, userId, "USDC")).toBe("44");
    const cancelled = await rest(server, "POST", `/v1/withdrawals/${withdrawal.body.reference}/cancel`, { headers: test.headers });
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect(cancelled.body.status).toBe("CANCELLED");
    expect(await balanceOf(server, test, userId, "USDC")).toBe("50");
    const again = await rest(server, "POST", `/v1/withdrawals/${withdrawal.body.reference}/cancel`, { headers: test.headers });
    expect(again.status).toBe(409);
    expect(await balanceOf(server, test, userId, "USDC")).toBe("50");

    const second = await rest(server, "POST", "/v1/withdrawals/usdc", { headers: test.headers, body: { userId, amount: 5, walletAddress: USDC_ADDRESS, network: "BASE", chainId: 8453 } });
    await rest(server, "POST", `/v1/sandbox/withdrawals/${second.body.reference}/process`, { headers: test.headers });
    const late = await rest(server, "POST", `/v1/withdrawals/${second.body.reference}/cancel`, { headers: test.headers });
    expect(late.status).toBe(409);
    const graphql = await gql(server, "mutation ($r: ID!) { cancelWithdrawal(reference: $r) { status } }", { r: second.body.reference }, test.headers);
    expect(errorCodes(graphql)).toEqual(["CONFLICT"]);
  });

  it("another mode's withdrawal cannot be cancelled: 404", async () => {
    const keys = await business();
    const userId = await fundedUser(server, keys.test, "USDC", "10");
    const withdrawal = await rest(server, "POST", "/v1/withdrawals/usdc", { headers: keys.test.headers, body: { userId, amount: 5, walletAddress: USDC_ADDRESS, network: "BASE", chainId: 8453 } });
    const res = await rest(server, "POST", `/v1/withdrawals/${withdrawal.body.reference}/cancel`, { headers: keys.live.headers });
    expect(res.status).toBe(404);
  });
});
