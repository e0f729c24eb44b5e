// Memory held per idle graphql-ws connection: the server's heap and RSS (after garbage collection)
// before and after opening N connections that each completed connection_init with a valid API key.
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import { startApp } from "./app-server.js";
import { mapConcurrent, range } from "./drive.js";
import type { Started } from "./processes.js";
import { markdownTable, section } from "./report.js";
import { newClient, withDatabase } from "./setup.js";

export type IdleWebSocketOptions = { databaseUrl: string; connections: number };

const OPENING_AT_ONCE = 50;
const SETTLE_MS = 1000;

type Memory = { rss: number; heapUsed: number; external: number; arrayBuffers: number };

/** The server's memory after two forced collections, through bench/memory-probe.ts. */
async function serverMemory(app: Started): Promise<Memory> {
  const reply = new Promise<Memory>((resolve) => {
    const onLine = (line: string) => {
      if (!line.startsWith('{"memory"')) return;
      app.lines.off("line", onLine);
      resolve((JSON.parse(line) as { memory: Memory }).memory);
    };
    app.lines.on("line", onLine);
  });
  app.process.kill("SIGUSR2");
  return reply;
}

/** A graphql-ws client that has been acknowledged (connection_ack after a valid connection_init). */
async function connected(url: string, apiKey: string): Promise<Client> {
  const client = createClient({ url, webSocketImpl: WebSocket, connectionParams: { "x-api-key": apiKey }, lazy: false, retryAttempts: 0 });
  await new Promise<void>((resolve, reject) => {
    client.on("connected", () => resolve());
    client.on("closed", (event) => reject(new Error(`connection closed: ${JSON.stringify(event)}`)));
  });
  return client;
}

const kB = (bytes: number) => (bytes / 1024).toFixed(1);
const MB = (bytes: number) => (bytes / 2 ** 20).toFixed(1);

export async function benchIdleWebSockets({ databaseUrl, connections }: IdleWebSocketOptions): Promise<string> {
  const { apiKey } = await withDatabase(databaseUrl, ({ prisma }) => newClient(prisma));
  const app = await startApp(databaseUrl, {}, ["--expose-gc", "--import", "./bench/memory-probe.ts"]);
  const url = `${app.url.replace(/^http/, "ws")}/graphql`;
  let clients: Client[] = [];
  try {
    // One connection first, so that what every connection loads once is in the "before" figure.
    await (await connected(url, apiKey)).dispose();
    const before = await serverMemory(app);
    clients = await mapConcurrent(range(connections), OPENING_AT_ONCE, () => connected(url, apiKey));
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const after = await serverMemory(app);
    const perConnection = (key: keyof Memory) => kB((after[key] - before[key]) / connections);
    const heapAndBuffers = (m: Memory) => m.heapUsed + m.external;
    return section(
      `Idle graphql-ws connections, ${connections} connections each after connection_init with a valid API key (no subscription), server memory after GC`,
      markdownTable(
        ["measure", "before MB", "after MB", "kB per connection"],
        [
          ["JS heap used + external (buffers)", MB(heapAndBuffers(before)), MB(heapAndBuffers(after)), kB((heapAndBuffers(after) - heapAndBuffers(before)) / connections)],
          ["  of which JS heap used", MB(before.heapUsed), MB(after.heapUsed), perConnection("heapUsed")],
          ["process RSS", MB(before.rss), MB(after.rss), perConnection("rss")],
        ],
      ),
    );
  } finally {
    await Promise.all(clients.map((client) => client.dispose()));
    await app.stop();
  }
}

