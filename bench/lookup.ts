// Request throughput and latency of the user lookup on both API surfaces, beside a plain
// node:http + pg baseline and two floors that show where the time goes (framework, auth-less path).
import { startApp } from "./app-server.js";
import { load, type LoadResult, type LoadTarget } from "./load.js";
import { cpuMsBetween, probe, PROBED } from "./probe.js";
import { startProcess, type Started } from "./processes.js";
import { markdownTable, ratio, section } from "./report.js";
import { newClient, newUsers, withDatabase } from "./setup.js";

export type LookupOptions = { databaseUrl: string; seconds: number; connections: number };

function targets(appUrl: string, baselineUrl: string, apiKey: string, userId: string): LoadTarget[] {
  const auth = { "x-api-key": apiKey };
  return [
    { name: "baseline: node:http + pg", url: `${baselineUrl}/user/${userId}` },
    { name: "Express GET /healthz (framework floor)", url: `${appUrl}/healthz` },
    { name: "REST unauthenticated GET /v1/user/{id} (no database: 401)", url: `${appUrl}/v1/user/${userId}`, expectStatus: 401 },
    { name: "REST GET /v1/user/{id}", url: `${appUrl}/v1/user/${userId}`, headers: auth },
    {
      name: "GraphQL user(id) (POST, variables)",
      url: `${appUrl}/graphql`,
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({
        query: "query User($id: ID!) { user(id: $id) { id createdAt updatedAt firstName lastName phoneNumber email clientId } }",
        variables: { id: userId },
      }),
    },
  ];
}

type Measured = LoadResult & { cpuMicrosPerRequest: number };

function table(results: Measured[]): string {
  const baseline = results[0].requestsPerSecond;
  return markdownTable(
    ["target", "req/s", "× baseline", "p50 ms", "p99 ms", "server CPU µs/req", "errors"],
    results.map((r) => [r.name, r.requestsPerSecond, ratio(r.requestsPerSecond, baseline), r.p50, r.p99, Math.round(r.cpuMicrosPerRequest), r.errors + r.unexpected]),
  );
}

/** The load, with the CPU time the serving process spent on it per request (steadier than req/s on a busy machine). */
async function measured(server: Started, target: LoadTarget, options: { connections: number; seconds: number }): Promise<Measured> {
  const before = await probe(server);
  const result = await load(target, options);
  const requests = result.requestsPerSecond * options.seconds;
  return { ...result, cpuMicrosPerRequest: (cpuMsBetween(before, await probe(server)) * 1000) / requests };
}

export async function benchLookup({ databaseUrl, seconds, connections }: LookupOptions): Promise<string> {
  const { apiKey, userId } = await withDatabase(databaseUrl, async ({ prisma }) => {
    const { apiKey, clientId } = await newClient(prisma);
    const [userId] = await newUsers(prisma, clientId, 1);
    return { apiKey, userId };
  });
  const app = await startApp(databaseUrl, {}, PROBED);
  try {
    const baseline = await startProcess("bench/baseline-server.ts", { DATABASE_URL: databaseUrl, PORT: "0" }, PROBED);
    try {
      const all = targets(app.url, baseline.url, apiKey, userId);
      for (const target of all) await load(target, { connections, seconds: 2 }); // warm-up
      const results: Measured[] = [];
      for (const [i, target] of all.entries()) results.push(await measured(i === 0 ? baseline : app, target, { connections, seconds }));
      return section(`User lookup, ${connections} connections, ${seconds} s each`, table(results));
    } finally {
      await baseline.stop();
    }
  } finally {
    await app.stop();
  }
}
