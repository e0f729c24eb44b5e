// npm run bench — on real PostgreSQL, each part beside a baseline measured in the same run:
//   lookup:   user lookup throughput and latency on both API surfaces (baseline: node:http + pg)
//   deposits: deposit completion → graphql-ws subscriber latency, many users and one hot user (baseline: LISTEN/NOTIFY round trip)
//   websockets: server memory per idle graphql-ws connection (after connection_init)
//   journals: ledger journal postings per second under concurrency (baseline: plain pg hot-row transactions)
//   chain: against anvil, transfer mined → PENDING at a graphql-ws subscriber, a cold scan of many blocks for many addresses,
//     and many USDC withdrawals requested at once: request → PROCESSING, all mined, sends/s, nonces and transfers checked on chain
// Settings: BENCH_ONLY (comma-separated parts, default all), BENCH_DATABASE_URL (default: a
// `fintech_bench` database on 127.0.0.1:5432), BENCH_SECONDS (10), BENCH_CONNECTIONS (50), BENCH_LOOKUP_ROUNDS (3),
// BENCH_DEPOSITS (200 per row and round), BENCH_DEPOSIT_CONCURRENCY (10), BENCH_DEPOSIT_USERS (10), BENCH_DEPOSIT_ROUNDS (3), BENCH_JOURNAL_WORKERS (20),
// BENCH_JOURNALS_PER_WORKER (100), BENCH_POOL_SIZE (10), BENCH_WEBSOCKETS (1000),
// BENCH_CPU_PROFILE_DIR (unset: when set, each started server writes a CPU profile there),
// BENCH_COMPARE_WITH (unset: another checkout, with its own node_modules, whose server the lookup
// part measures beside this one's: before/after in one run), BENCH_CLUSTER_WORKERS (2: the workers of
// the clustered server whose REST and GraphQL lookups are measured beside the one-process server's),
// BENCH_CHAIN_TRANSFERS (200), BENCH_CHAIN_POLL_MS (500: the server's CHAIN_POLL_MS), BENCH_CHAIN_ADDRESSES (100000),
// BENCH_CHAIN_BLOCKS (10000), BENCH_CHAIN_SCAN_TRANSFERS (2000, half of them to custodial addresses), BENCH_CHAIN_SENDS (200).
import { benchChain } from "./chain.js";
import { benchDepositLatency } from "./deposit-latency.js";
import { benchIdleWebSockets } from "./idle-websockets.js";
import { benchJournals } from "./journals.js";
import { benchLookup } from "./lookup.js";
import { ensureDatabase } from "./setup.js";

const setting = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const databaseUrl = process.env.BENCH_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/fintech_bench";

const parts: Record<string, () => Promise<string>> = {
  lookup: () =>
    benchLookup({
      databaseUrl,
      seconds: setting("BENCH_SECONDS", 10),
      connections: setting("BENCH_CONNECTIONS", 50),
      rounds: setting("BENCH_LOOKUP_ROUNDS", 3),
      compareWith: process.env.BENCH_COMPARE_WITH,
      clusterWorkers: setting("BENCH_CLUSTER_WORKERS", 2),
    }),
  deposits: () =>
    benchDepositLatency({
      databaseUrl,
      count: setting("BENCH_DEPOSITS", 200),
      concurrency: setting("BENCH_DEPOSIT_CONCURRENCY", 10),
      users: setting("BENCH_DEPOSIT_USERS", 10),
      rounds: setting("BENCH_DEPOSIT_ROUNDS", 3),
    }),
  websockets: () => benchIdleWebSockets({ databaseUrl, connections: setting("BENCH_WEBSOCKETS", 1000) }),
  journals: () =>
    benchJournals({
      databaseUrl,
      workers: setting("BENCH_JOURNAL_WORKERS", 20),
      perWorker: setting("BENCH_JOURNALS_PER_WORKER", 100),
      poolSize: setting("BENCH_POOL_SIZE", 10),
    }),
  chain: () =>
    benchChain({
      databaseUrl,
      transfers: setting("BENCH_CHAIN_TRANSFERS", 200),
      pollMs: setting("BENCH_CHAIN_POLL_MS", 500),
      addresses: setting("BENCH_CHAIN_ADDRESSES", 100_000),
      blocks: setting("BENCH_CHAIN_BLOCKS", 10_000),
      scanTransfers: setting("BENCH_CHAIN_SCAN_TRANSFERS", 2000),
      sends: setting("BENCH_CHAIN_SENDS", 200),
    }),
};

async function main() {
  const chosen = (process.env.BENCH_ONLY ?? Object.keys(parts).join(",")).split(",").map((name) => name.trim()).filter(Boolean);
  const unknown = chosen.filter((name) => !(name in parts));
  if (unknown.length) throw new Error(`BENCH_ONLY: unknown part ${unknown.join(", ")} (parts: ${Object.keys(parts).join(", ")})`);
  await ensureDatabase(databaseUrl);
  for (const name of chosen) process.stdout.write(await parts[name]());
}

void main().catch((err) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
