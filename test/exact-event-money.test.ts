import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { parse, stringify } from "lossless-json";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { createUser } from "./support/http.js";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";
import { settle } from "./support/subscriptions.js";
import { until } from "./support/until.js";
import { startReceiver, type Receiver } from "./support/webhook-receiver.js";

/**
 * An 18-decimal DAI amount, end to end: the JSON text REST answers with carries every digit, and so
 * must every other place its deposit.created event goes: the feed (REST and GraphQL), a webhook body
 * at a real receiver, the SSE feed, graphql-ws, and `npm run listen`'s forward. Each text is compared
 * as written (read with lossless-json, which keeps a number's text), never through a double.
 */
const AMOUNT = "1.123456789012345678";
const EXACT = `"amount":${AMOUNT}`;

/** The exact JSON text of a value inside a JSON text (its numbers as written). */
const exactText = (value: unknown) => stringify(value);
const objectOf = (text: string, path: (parsed: any) => unknown) => exactText(path(parse(text)));

let server: TestServer;
let tenant: Tenant;
let endpointReceiver: Receiver;
let listenReceiver: Receiver;
let listen: ChildProcess | undefined;

beforeAll(async () => {
  server = await startServer({ env: { WEBHOOK_DELIVERY: "on", WEBHOOK_RETRY_SCHEDULE: "100ms,200ms" }, webhookTimeoutMs: 1000 });
  tenant = await newTenant(server);
  endpointReceiver = await startReceiver();
  listenReceiver = await startReceiver();
}, 60_000);
afterAll(async () => {
  listen?.kill("SIGINT");
  await endpointReceiver?.close();
  await listenReceiver?.close();
  await server?.stop();
});

async function text(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { ...tenant.headers, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(response.status, `${method} ${path}`).toBeLessThan(300);
  return response.text();
}

/** The raw text of the SSE frames of a subscription, as they arrive. */
async function sseFrames(query: string) {
  const frames: string[] = [];
  const abort = new AbortController();
  const response = await fetch(`${server.url}/graphql`, {
    method: "POST",
    headers: { ...tenant.headers, "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify({ query }),
    signal: abort.signal,
  });
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) frames.push(decoder.decode(chunk, { stream: true }));
  })().catch(() => undefined);
  return { text: () => frames.join(""), close: () => abort.abort() };
}

/** The raw text of every graphql-ws message of a subscription. */
async function wsMessages(query: string) {
  const messages: string[] = [];
  const socket = new WebSocket(`${server.url.replace(/^http/, "ws")}/graphql`, "graphql-transport-ws");
  socket.on("message", (data) => messages.push(String(data)));
  await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
  socket.send(JSON.stringify({ type: "connection_init", payload: { "x-api-key": tenant.apiKey } }));
  await until(async () => messages.some((message) => message.includes("connection_ack")), "connection_ack", 10_000, 20);
  socket.send(JSON.stringify({ id: "1", type: "subscribe", payload: { query } }));
  return { messages, close: () => socket.close() };
}

describe("an 18-decimal amount in events", () => {
  it("reads with every digit REST shows, in the feed, GraphQL, webhook bodies, SSE, graphql-ws and npm run listen", { timeout: 90_000 }, async () => {
    const userId = await createUser(server, tenant);
    await text("POST", "/v1/webhook-endpoints", { url: endpointReceiver.url, events: ["deposit.created"] });
    listen = spawn(join(process.cwd(), "node_modules/.bin/tsx"), ["scripts/listen.ts", "--forward", listenReceiver.url, "--events", "deposit.created"], {
      cwd: process.cwd(),
      env: { PATH: process.env.PATH, API_KEY: tenant.apiKey, BASE_URL: server.url },
      stdio: ["ignore", "pipe", "inherit"],
    });
    const listening = new Promise<void>((resolve) => createInterface({ input: listen!.stdout! }).on("line", (line) => line.startsWith("webhook signing secret") && resolve()));
    const eventsQuery = `subscription { events(types: ["deposit.created"]) { id type data } }`;
    const sse = await sseFrames(eventsQuery);
    const ws = await wsMessages(eventsQuery);
    await listening;
    await settle();

    const restText = await text("POST", "/v1/sandbox/deposits", { userId, currency: "DAI", amount: AMOUNT });
    expect(restText).toContain(EXACT);
    const deposit = exactText(parse(restText));

    const feed = await until(async () => {
      const page = await text("GET", "/v1/events?type=deposit.created");
      return page.includes('"deposit.created"') ? page : undefined;
    }, "the event in the feed");
    const graphql = await text("POST", "/graphql", { query: `{ events(types: ["deposit.created"]) { edges { node { data } } } }` });
    const [webhook] = await endpointReceiver.waitForMessages(1);
    const [forwarded] = await listenReceiver.waitForMessages(1, 30_000);
    const sseText = await until(async () => (sse.text().includes("deposit.created") ? sse.text() : undefined), "the SSE frame");
    const wsText = await until(async () => ws.messages.find((message) => message.includes("deposit.created")), "the graphql-ws message");
    sse.close();
    ws.close();

    const seen = {
      "GET /v1/events": objectOf(feed, (page) => page.data[0].data.object),
      "GraphQL events": objectOf(graphql, (answer) => answer.data.events.edges[0].node.data.object),
      "webhook body": objectOf(webhook.body, (event) => event.data.object),
      "npm run listen": objectOf(forwarded.body, (event) => event.data.object),
      SSE: objectOf(sseText.split("\n").find((line) => line.startsWith("data: {"))!.slice("data: ".length), (frame) => frame.data.events.data.object),
      "graphql-ws": objectOf(wsText, (message) => message.payload.data.events.data.object),
    };
    for (const [where, object] of Object.entries(seen)) {
      expect(object, where).toContain(EXACT);
      expect(object, where).toBe(deposit);
    }
  });
});
