// Memory held per idle graphql-ws connection: the server's heap and RSS (after garbage collection)
// before and after opening N connections that each completed connection_init with a valid API key.
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import { startApp } from "./app-server.js";
import { mapConcurrent, range } from "./drive.js";
import { PROBED, probe } from "./probe.js";
import { markdownTable, section } from "./report.js";
import { newClient, withDatabase } from "./setup.js";

export type IdleWebSocketOptions = { databaseUrl: string; connections: number };

const OPENING_AT_ONCE = 50;
const SETTLE_MS = 1000;

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
  const { apiKey } = await withDatabase(databaseUrl, ({ prisma }) => newClient(prisma, "live"));
  // Every connection comes from this one address and client: lift the per-address and per-client stream caps.
  const app = await startApp(databaseUrl, { WS_MAX_CONNECTIONS_PER_IP: String(connections + 10), WS_MAX_CONNECTIONS_PER_CLIENT: String(connections + 10) }, PROBED);
  const url = `${app.url.replace(/^http/, "ws")}/graphql`;
  let clients: Client[] = [];
  try {
    // One connection first, so that what every connection loads once is in the "before" figure.
    await (await connected(url, apiKey)).dispose();
    const before = (await probe(app)).memory;
    clients = await mapConcurrent(range(connections), OPENING_AT_ONCE, () => connected(url, apiKey));
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const after = (await probe(app)).memory;
    const perConnection = (key: "heapUsed" | "rss") => kB((after[key] - before[key]) / connections);
    const heapAndBuffers = (m: NodeJS.MemoryUsage) => m.heapUsed + m.external;
    return section(
      `Idle graphql-ws connections, ${connections} connections each after connection_init with a valid API key (no subscription), server memory after GC`,
      markdownTable(
        ["measure", "before MB", "after MB", "kB per connection"],
        [
          ["JS heap used + external (buffers)", MB(heapAndBuffers(before)), MB(heapAndBuffers(after)), kB((heapAndBuffers(after) - heapAndBuffers(before)) / connections)],
          ["  of which JS heap used", MB(before.heapUsed), MB(after.heapUsed), perConnection("heapUsed")],
          ["process RSS (indicative: the allocator keeps and returns pages as it likes)", MB(before.rss), MB(after.rss), perConnection("rss")],
        ],
      ),
    );
  } finally {
    await Promise.all(clients.map((client) => client.dispose()));
    await app.stop();
  }
}

