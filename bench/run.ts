// npm run bench — request throughput and latency of the user lookup on both API surfaces, side by
// side with a plain node:http + pg baseline in the same run, on real PostgreSQL.
// Settings: BENCH_DATABASE_URL (default: a `fintech_bench` database on 127.0.0.1:5432),
// BENCH_SECONDS (default 10), BENCH_CONNECTIONS (default 50).
import { randomBytes } from "node:crypto";
import { cpus, totalmem } from "node:os";
import { HDKey } from "@scure/bip32";
import pg from "pg";
import { createClientWithKey } from "../src/clients/service.js";
import { openDatabase } from "../src/db/database.js";
import { ApiKeyService } from "../src/keys/service.js";
import { createLogger } from "../src/logger.js";
import { load, type LoadResult, type LoadTarget } from "./load.js";
import { startProcess } from "./processes.js";

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const databaseUrl = process.env.BENCH_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/fintech_bench";

async function ensureDatabase(url: string) {
  const target = new URL(url);
  const name = target.pathname.slice(1);
  const admin = new pg.Client({ connectionString: Object.assign(new URL(url), { pathname: "/postgres" }).toString() });
  await admin.connect();
  const exists = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
  if (!exists.rowCount) await admin.query(`CREATE DATABASE "${name.replace(/"/g, "")}"`);
  await admin.end();
}

async function seed() {
  const db = await openDatabase({ url: databaseUrl, logger: createLogger("warn") });
  try {
    const { apiKey, client } = await createClientWithKey(db.prisma, new ApiKeyService(db.prisma), {
      email: `bench-${randomBytes(4).toString("hex")}@example.com`,
    });
    const user = await db.prisma.user.create({
      data: { clientId: client.id, email: `user-${randomBytes(4).toString("hex")}@example.com`, firstName: "Bench", lastName: "User", phoneNumber: "+14155552671", dob: new Date("1990-01-01") },
    });
    return { apiKey: apiKey.key, userId: user.id };
  } finally {
    await db.close();
  }
}

function table(results: LoadResult[]): string {
  const baseline = results[0].requestsPerSecond;
  const rows = results.map(
    (r) => `| ${r.name} | ${r.requestsPerSecond} | ${(r.requestsPerSecond / baseline).toFixed(2)} | ${r.p50} | ${r.p99} | ${r.errors + r.non2xx} |`,
  );
  return ["| target | req/s | × baseline | p50 ms | p99 ms | errors |", "|---|---|---|---|---|---|", ...rows].join("\n");
}

async function main() {
  await ensureDatabase(databaseUrl);
  const { apiKey, userId } = await seed();
  const secret = () => randomBytes(32).toString("hex");
  const app = await startProcess("src/main.ts", {
    NODE_ENV: "production",
    DATABASE_URL: databaseUrl,
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "info", // the "server started" line carries the URL
    JWT_SECRET: secret(),
    ENCRYPTION_KEY: secret(),
    WEBHOOK_SECRET: secret(),
    CUSTODIAN_MASTER_KEY: HDKey.fromMasterSeed(randomBytes(64)).privateExtendedKey,
    RATE_LIMIT_PER_MINUTE: "100000000",
  });
  const baseline = await startProcess("bench/baseline-server.ts", { DATABASE_URL: databaseUrl, PORT: "0" });
  const auth = { "x-api-key": apiKey };
  const targets: LoadTarget[] = [
    { name: "baseline: node:http + pg", url: `${baseline.url}/user/${userId}` },
    { name: "REST GET /v1/user/{id}", url: `${app.url}/v1/user/${userId}`, headers: auth },
    {
      name: "GraphQL user(id) (POST, variables)",
      url: `${app.url}/graphql`,
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({
        query: "query User($id: ID!) { user(id: $id) { id createdAt updatedAt firstName lastName phoneNumber email clientId } }",
        variables: { id: userId },
      }),
    },
  ];
  try {
    for (const target of targets) await load(target, { connections, seconds: 2 }); // warm-up
    const results: LoadResult[] = [];
    for (const target of targets) results.push(await load(target, { connections, seconds }));
    process.stdout.write(`\nUser lookup, ${connections} connections, ${seconds} s each, ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}\n\n`);
    process.stdout.write(`${table(results)}\n`);
  } finally {
    await Promise.all([app.stop(), baseline.stop()]);
  }
}

void main().catch((err) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
