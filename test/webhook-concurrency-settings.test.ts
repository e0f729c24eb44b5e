import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, rest } from "./support/http.js";
import { newTenant, startServer, type TestServer } from "./support/server.js";
import { startReceiver, type Receiver } from "./support/webhook-receiver.js";

/**
 * WEBHOOK_CONCURRENCY_PER_ENDPOINT takes effect: a receiver that takes 1.5 s per request never has
 * more than that many requests of one endpoint at once, and has that many (the default, 16, would
 * let all of them in together).
 */
const PER_ENDPOINT = 2;
const EVENTS = 8;

let server: TestServer;
let receiver: Receiver;
let open = 0;
let most = 0;
beforeAll(async () => {
  server = await startServer({
    env: { WEBHOOK_DELIVERY: "on", WEBHOOK_RETRY_SCHEDULE: "100ms,200ms", WEBHOOK_CONCURRENCY_PER_ENDPOINT: String(PER_ENDPOINT) },
    webhookTimeoutMs: 10_000,
  });
  receiver = await startReceiver(async () => {
    most = Math.max(most, ++open);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    open--;
    return 200;
  });
}, 60_000);
afterAll(async () => {
  await receiver?.close();
  await server?.stop();
});

describe("WEBHOOK_CONCURRENCY_PER_ENDPOINT", () => {
  it(`sends at most ${PER_ENDPOINT} requests at once to one endpoint`, { timeout: 60_000 }, async () => {
    const tenant = await newTenant(server);
    const registered = await rest(server, "POST", "/v1/webhook-endpoints", { headers: tenant.headers, body: { url: receiver.url, events: ["user.created"] } });
    expect(registered.status).toBe(201);
    // Written at once, so the worker finds them all due together.
    await Promise.all(Array.from({ length: EVENTS }, () => createUser(server, tenant)));
    const received = await receiver.waitForMessages(EVENTS, 40_000);
    expect(new Set(received.map((request) => request.headers["webhook-id"])).size).toBe(EVENTS);
    expect(most).toBe(PER_ENDPOINT);
  });
});
