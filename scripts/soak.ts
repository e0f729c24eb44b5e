// npm run soak -- [--minutes 10] [--warmup-minutes 1] [--senders 8]
// Mixed load on the real server (its own process, on a scratch PostgreSQL database beside
// TEST_DATABASE_URL or DATABASE_URL) for a while; prints, per minute, requests, 5xx answers, p50/p99
// latency, the server's heap floor and RSS, then the row counts of the growing tables at start and end,
// and a verdict: memory flat (< 10% growth after the warm-up) and p99 not climbing.
import { createServer } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { userInput } from "../test/support/http.js";
import { call, createScratchClient, createScratchDatabase, scratchServerEnv, startScratchServer } from "../test/support/scratch-server.js";

const { values } = parseArgs({ options: { minutes: { type: "string", default: "10" }, "warmup-minutes": { type: "string", default: "1" }, senders: { type: "string", default: "8" } } });
const minutes = Number(values.minutes);
const warmupMinutes = Number(values["warmup-minutes"]);
const baseUrl = process.env.TEST_DATABASE_URL || process.env.DATABASE_URL;
if (!baseUrl || !(minutes > warmupMinutes)) {
  process.stderr.write("Set TEST_DATABASE_URL (PostgreSQL), and --minutes above --warmup-minutes.\n");
  process.exit(2);
}

const GROWING_TABLES = ["events", "webhook_deliveries", "webhook_delivery_attempts", "idempotency_records", "conversion_quotes", "ledger_entries", "deposits", "withdrawals", "conversions", "users"];
const METRICS_TOKEN = "soak-metrics-token-0123456789";
const USDC_ADDRESS = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48";

const database = await createScratchDatabase(baseUrl, "soak");
const dataDir = mkdtempSync(join(tmpdir(), "fintech-soak-"));
// Webhook deliveries go to a receiver on loopback that answers at once.
const receiver = createServer((req, res) => req.resume().on("end", () => res.writeHead(200).end()));
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hooks`;
const db = new pg.Client({ connectionString: database.url });

try {
  const apiKey = await createScratchClient(database.url);
  await db.connect();
  const server = await startScratchServer(
    scratchServerEnv(database.url, dataDir, { SANDBOX_SETTLE_MS: "1000", RATE_LIMIT_PER_MINUTE: "10000000", METRICS_TOKEN }),
  );

  const headers = { "x-api-key": apiKey, "content-type": "application/json" };
  await call(server.url, "POST", "/v1/webhook-endpoints", headers, { url: receiverUrl });
  const users: string[] = [];
  for (let i = 0; i < 20; i++) users.push((await call(server.url, "POST", "/v1/user", headers, userInput())).body.id);

  const rowCounts = async () => {
    const counts: Record<string, number> = {};
    for (const table of GROWING_TABLES) counts[table] = Number((await db.query(`SELECT count(*) FROM ${table}`)).rows[0].count);
    return counts;
  };
  const memory = async () => {
    const text = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
    const read = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "m").exec(text)?.[1] ?? NaN);
    return { heapUsed: read("nodejs_heap_size_used_bytes"), rss: read("process_resident_memory_bytes") };
  };

  const startRows = await rowCounts();
  const started = Date.now();
  const deadline = started + minutes * 60_000;
  const minuteOf = () => Math.floor((Date.now() - started) / 60_000);
  type Minute = { latencies: number[]; errors: number; heapFloor: number; rss: number };
  const perMinute: Minute[] = Array.from({ length: minutes }, () => ({ latencies: [], errors: 0, heapFloor: Infinity, rss: 0 }));
  let sequence = 0;

  const operations: (() => Promise<unknown>)[] = [
    ...Array(5).fill(() => call(server.url, "GET", `/v1/user/${pick(users)}`, headers)),
    ...Array(2).fill(() => call(server.url, "POST", "/graphql", headers, { query: `query ($id: ID!) { user(id: $id) { balances { currency balance } } }`, variables: { id: pick(users) } })),
    ...Array(2).fill(() => call(server.url, "GET", `/v1/transactions/ledger/${pick(users)}?limit=20`, headers)),
    ...Array(3).fill(() => keyed("/v1/sandbox/deposits", { userId: pick(users), currency: "USDC", amount: "5" })),
    ...Array(3).fill(() => keyed("/v1/withdrawals/usdc", { userId: pick(users), amount: "1.25", walletAddress: USDC_ADDRESS, network: "ETHEREUM", chainId: 1 })),
    ...Array(2).fill(() => keyed("/v1/conversion", { userId: pick(users), from: "USDC", to: "EUR", amount: "2" })),
    () => call(server.url, "GET", "/v1/conversion/quote?from=USDC&to=EUR&amount=3", headers),
    () => keyed("/v1/user", userInput()),
  ];
  function keyed(path: string, body: unknown) {
    return call(server.url, "POST", path, { ...headers, "idempotency-key": `soak-${sequence++}` }, body);
  }

  const senders = Array.from({ length: Number(values.senders) }, async () => {
    while (Date.now() < deadline) {
      const began = performance.now();
      const answer = (await pick(operations)().catch(() => ({ status: 599 }))) as { status: number };
      const minute = perMinute[minuteOf()];
      if (!minute) break;
      minute.latencies.push(performance.now() - began);
      // A withdrawal beyond the balance is a 500 by the REST contract (INSUFFICIENT_FUNDS): not a failure of the server.
      if (answer.status >= 500 && (answer as { body?: { code?: string } }).body?.code !== "INSUFFICIENT_FUNDS") minute.errors++;
    }
  });
  const sampler = (async () => {
    while (Date.now() < deadline) {
      const minute = perMinute[minuteOf()];
      const sample = await memory().catch(() => undefined);
      if (minute && sample) {
        minute.heapFloor = Math.min(minute.heapFloor, sample.heapUsed);
        minute.rss = sample.rss;
      }
      await sleep(5_000);
    }
  })();
  await Promise.all([...senders, sampler]);
  const endRows = await rowCounts();

  const mb = (bytes: number) => Math.round(bytes / 1e5) / 10;
  const rows = perMinute.map((minute, index) => {
    const sorted = [...minute.latencies].sort((a, b) => a - b);
    const at = (q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN);
    return { minute: index + 1, requests: sorted.length, errors5xx: minute.errors, p50ms: at(0.5), p99ms: at(0.99), heapFloorMB: mb(minute.heapFloor), rssMB: mb(minute.rss) };
  });
  const first = rows[warmupMinutes];
  const last = rows[rows.length - 1];
  const growth = (from: number, to: number) => Math.round(((to - from) / from) * 1000) / 10;
  const verdict = {
    heapGrowthPct: growth(first.heapFloorMB, last.heapFloorMB),
    rssGrowthPct: growth(first.rssMB, last.rssMB),
    p99AfterWarmupMs: first.p99ms,
    p99LastMinuteMs: last.p99ms,
  };
  const flat = verdict.heapGrowthPct < 10 && verdict.rssGrowthPct < 10;
  const p99Steady = last.p99ms <= first.p99ms * 1.5;
  console.table(rows);
  console.log(JSON.stringify({ minutes, warmupMinutes, senders: Number(values.senders), verdict, memoryFlat: flat, p99Steady, startRows, endRows, serverErrors: server.errors.length }, null, 2));
  server.child.kill("SIGTERM");
  await server.exited;
  process.exitCode = flat && p99Steady ? 0 : 1;
} finally {
  await db.end().catch(() => undefined);
  receiver.close();
  await database.drop();
  rmSync(dataDir, { recursive: true, force: true });
}

function pick<T>(list: readonly T[]): T {
  return list[Math.floor(Math.random() * list.length)];
}
