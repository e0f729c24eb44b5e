// One lookup, alone, at a fixed rate, for a CPU profile of the server that answers it:
//   BENCH_CPU_PROFILE_DIR=dir npx tsx bench/profile-lookup.ts <baseline|rest|graphql> [req/s] [seconds]
// then `npx tsx bench/profile-layers.ts dir/<its profile> <seconds − 3> <req/s>` for each layer's CPU
// per request. At a fixed rate, under what the server can do, the servers are compared on the same
// work (at saturation each does its own amount). `graphql` sends the Accept of graphql-request 7.
// BENCH_DATABASE_URL as for `npm run bench`.
import { startApp } from "./app-server.js";
import { ACCEPT_FORMS, graphqlLookup, lookedUpUser, restLookup } from "./lookup.js";
import { load } from "./load.js";
import { startProcess } from "./processes.js";
import { ensureDatabase } from "./setup.js";

const WARM_UP_SECONDS = 2;
const CONNECTIONS = 20;

async function main() {
  const [kind = "rest", rate = "2000", seconds = "15"] = process.argv.slice(2);
  if (!["baseline", "rest", "graphql"].includes(kind)) throw new Error("usage: profile-lookup.ts <baseline|rest|graphql> [req/s] [seconds]");
  if (!process.env.BENCH_CPU_PROFILE_DIR) throw new Error("set BENCH_CPU_PROFILE_DIR: the directory the server's profile goes to");
  const databaseUrl = process.env.BENCH_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/fintech_bench";
  await ensureDatabase(databaseUrl);
  const { apiKey, userId } = await lookedUpUser(databaseUrl);
  const server =
    kind === "baseline"
      ? await startProcess("bench/baseline-server.ts", { DATABASE_URL: databaseUrl, PORT: "0" })
      : await startApp(databaseUrl);
  try {
    const target =
      kind === "baseline"
        ? { name: "baseline: node:http + pg", url: `${server.url}/user/${userId}` }
        : kind === "rest"
          ? restLookup(server.url, apiKey, userId)
          : graphqlLookup(ACCEPT_FORMS[0])(server.url, apiKey, userId);
    await load(target, { connections: CONNECTIONS, seconds: WARM_UP_SECONDS });
    const result = await load(target, { connections: CONNECTIONS, seconds: Number(seconds), rate: Number(rate) });
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await server.stop();
  }
}

void main().catch((err) => {
  process.stderr.write(`profile-lookup failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
