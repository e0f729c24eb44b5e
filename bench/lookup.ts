// Request throughput and latency of the user lookup on both API surfaces, beside a plain
// node:http + pg baseline and two floors that show where the time goes (framework, auth-less path).
import { startApp } from "./app-server.js";
import { load, type LoadResult, type LoadTarget } from "./load.js";
import { cpuMsBetween, probe, PROBED } from "./probe.js";
import { startProcess, type Started } from "./processes.js";
import { markdownTable, ratio, section } from "./report.js";
import { newClient, newUsers, withDatabase } from "./setup.js";

export type LookupOptions = {
  databaseUrl: string;
  seconds: number;
  connections: number;
  /** How many times each target is measured, in turns. */
  rounds: number;
  /** Another checkout (with its own node_modules) whose server is measured beside this one's, on the same lookups. */
  compareWith?: string;
};

type Run = { server: Started; target: LoadTarget };

const restLookup = (url: string, apiKey: string, userId: string, label = ""): LoadTarget => ({
  name: `REST GET /v1/user/{id}${label}`,
  url: `${url}/v1/user/${userId}`,
  headers: { "x-api-key": apiKey },
});

const graphqlLookup = (url: string, apiKey: string, userId: string, label = ""): LoadTarget => ({
  name: `GraphQL user(id) (POST, variables)${label}`,
  url: `${url}/graphql`,
  method: "POST",
  headers: { "x-api-key": apiKey, "content-type": "application/json" },
  body: JSON.stringify({
    query: "query User($id: ID!) { user(id: $id) { id createdAt updatedAt firstName lastName phoneNumber email clientId } }",
    variables: { id: userId },
  }),
});

function runs(servers: { app: Started; baseline: Started; other?: Started; otherLabel: string }, apiKey: string, userId: string): Run[] {
  const { app, baseline, other, otherLabel } = servers;
  const beside = (make: typeof restLookup): Run[] => (other ? [{ server: other, target: make(other.url, apiKey, userId, otherLabel) }] : []);
  return [
    { server: baseline, target: { name: "baseline: node:http + pg", url: `${baseline.url}/user/${userId}` } },
    { server: app, target: { name: "Express GET /healthz (framework floor)", url: `${app.url}/healthz` } },
    { server: app, target: { name: "REST unauthenticated GET /v1/user/{id} (no database: 401)", url: `${app.url}/v1/user/${userId}`, expectStatus: 401 } },
    { server: app, target: restLookup(app.url, apiKey, userId) },
    ...beside(restLookup),
    { server: app, target: graphqlLookup(app.url, apiKey, userId) },
    ...beside(graphqlLookup),
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

/** The round whose req/s is the median of the target's rounds (its latencies and CPU come with it). */
function median(rounds: Measured[]): Measured {
  return [...rounds].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond)[Math.floor(rounds.length / 2)];
}

export async function benchLookup({ databaseUrl, seconds, connections, rounds: roundCount, compareWith }: LookupOptions): Promise<string> {
  const { apiKey, userId } = await withDatabase(databaseUrl, async ({ prisma }) => {
    const { apiKey, clientId } = await newClient(prisma);
    const [userId] = await newUsers(prisma, clientId, 1);
    return { apiKey, userId };
  });
  const started: Started[] = [];
  const start = async (server: Promise<Started>) => {
    started.push(await server);
    return started[started.length - 1];
  };
  try {
    const app = await start(startApp(databaseUrl, {}, PROBED));
    const baseline = await start(startProcess("bench/baseline-server.ts", { DATABASE_URL: databaseUrl, PORT: "0" }, PROBED));
    const other = compareWith ? await start(startApp(databaseUrl, {}, PROBED, compareWith)) : undefined;
    const all = runs({ app, baseline, other, otherLabel: ` — the server of ${compareWith}` }, apiKey, userId);
    for (const { target } of all) await load(target, { connections, seconds: 2 }); // warm-up
    // The targets take turns, round after round: a burst of load from elsewhere on the machine then
    // hits one round of every target rather than the whole measure of one.
    const rounds: Measured[][] = all.map(() => []);
    for (let round = 0; round < roundCount; round++) {
      for (const [i, { server, target }] of all.entries()) rounds[i].push(await measured(server, target, { connections, seconds }));
    }
    return section(
      `User lookup, ${connections} connections, ${roundCount} rounds of ${seconds} s each; per target its median round by req/s`,
      table(rounds.map(median)),
    );
  } finally {
    for (const server of started.reverse()) await server.stop();
  }
}
