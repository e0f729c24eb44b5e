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
  /** Worker processes of the clustered server measured beside the one-process server (WEB_CONCURRENCY). */
  clusterWorkers: number;
};

type Run = { server: Started; target: LoadTarget };

export const restLookup = (url: string, apiKey: string, userId: string, label = ""): LoadTarget => ({
  name: `REST GET /v1/user/{id}${label}`,
  url: `${url}/v1/user/${userId}`,
  headers: { "x-api-key": apiKey },
});

/** The Accept headers GraphQL clients send (none: curl, and the bench of earlier rounds). */
export const ACCEPT_FORMS: { client: string; accept?: string }[] = [
  { client: "graphql-request 7 / graphql-http", accept: "application/graphql-response+json, application/json" },
  { client: "Apollo Client 4", accept: "application/graphql-response+json,application/json;q=0.9" },
  { client: "urql", accept: "application/graphql-response+json, application/graphql+json, application/json, text/event-stream, multipart/mixed" },
  { client: "*/*", accept: "*/*" },
  { client: "no Accept" },
];

export const graphqlLookup = (form: (typeof ACCEPT_FORMS)[number]) => (url: string, apiKey: string, userId: string, label = ""): LoadTarget => ({
  name: `GraphQL user(id), Accept of ${form.client}${label}`,
  url: `${url}/graphql`,
  method: "POST",
  headers: { "x-api-key": apiKey, "content-type": "application/json", ...(form.accept ? { accept: form.accept } : {}) },
  body: JSON.stringify({
    query: "query User($id: ID!) { user(id: $id) { id createdAt updatedAt firstName lastName phoneNumber email clientId } }",
    variables: { id: userId },
  }),
});

function runs(servers: { app: Started; baseline: Started; other?: Started; otherLabel: string; cluster: Started; workers: number }, apiKey: string, userId: string): Run[] {
  const { app, baseline, other, otherLabel, cluster, workers } = servers;
  const beside = (make: typeof restLookup): Run[] => (other ? [{ server: other, target: make(other.url, apiKey, userId, otherLabel) }] : []);
  return [
    { server: baseline, target: { name: "baseline: node:http + pg", url: `${baseline.url}/user/${userId}` } },
    { server: app, target: { name: "Express GET /healthz (framework floor)", url: `${app.url}/healthz` } },
    { server: app, target: { name: "REST unauthenticated GET /v1/user/{id} (no database: 401)", url: `${app.url}/v1/user/${userId}`, expectStatus: 401 } },
    { server: app, target: restLookup(app.url, apiKey, userId) },
    ...beside(restLookup),
    ...ACCEPT_FORMS.flatMap((form) => [{ server: app, target: graphqlLookup(form)(app.url, apiKey, userId) }, ...beside(graphqlLookup(form))]),
    { server: cluster, target: restLookup(cluster.url, apiKey, userId, ` — ${workers} workers`) },
    { server: cluster, target: graphqlLookup(ACCEPT_FORMS[0])(cluster.url, apiKey, userId, ` — ${workers} workers`) },
  ];
}

type Measured = LoadResult & { cpuMicrosPerRequest: number };

function table(results: Measured[]): string {
  const [baseline] = results;
  return markdownTable(
    ["target", "req/s", "× baseline", "p50 ms", "p99 ms", "p99 × baseline", "server CPU µs/req", "errors"],
    results.map((r) => [
      r.name,
      r.requestsPerSecond,
      ratio(r.requestsPerSecond, baseline.requestsPerSecond),
      r.p50,
      r.p99,
      ratio(r.p99, baseline.p99),
      Number.isNaN(r.cpuMicrosPerRequest) ? "–" : Math.round(r.cpuMicrosPerRequest),
      r.errors + r.unexpected,
    ]),
  );
}

/**
 * The load, with the CPU time the serving process spent on it per request (steadier than req/s on a
 * busy machine); not for a clustered server, whose workers are other processes (NaN).
 */
async function measured(server: Started, target: LoadTarget, options: { connections: number; seconds: number }, probed: boolean): Promise<Measured> {
  if (!probed) return { ...(await load(target, options)), cpuMicrosPerRequest: Number.NaN };
  const before = await probe(server);
  const result = await load(target, options);
  const requests = result.requestsPerSecond * options.seconds;
  return { ...result, cpuMicrosPerRequest: (cpuMsBetween(before, await probe(server)) * 1000) / requests };
}

/** The round whose req/s is the median of the target's rounds (its latencies and CPU come with it). */
function median(rounds: Measured[]): Measured {
  return [...rounds].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond)[Math.floor(rounds.length / 2)];
}

/** A fresh tenant's API key and the one user its lookups read. */
export const lookedUpUser = (databaseUrl: string) =>
  withDatabase(databaseUrl, async ({ prisma }) => {
    const { apiKey, clientId } = await newClient(prisma, "live");
    const [userId] = await newUsers(prisma, clientId, 1);
    return { apiKey, userId };
  });

export async function benchLookup({ databaseUrl, seconds, connections, rounds: roundCount, compareWith, clusterWorkers }: LookupOptions): Promise<string> {
  const { apiKey, userId } = await lookedUpUser(databaseUrl);
  const started: Started[] = [];
  const start = async (server: Promise<Started>) => {
    started.push(await server);
    return started[started.length - 1];
  };
  try {
    const app = await start(startApp(databaseUrl, {}, PROBED));
    const baseline = await start(startProcess("bench/baseline-server.ts", { DATABASE_URL: databaseUrl, PORT: "0" }, PROBED));
    const other = compareWith ? await start(startApp(databaseUrl, {}, PROBED, compareWith)) : undefined;
    const cluster = await start(startApp(databaseUrl, { WEB_CONCURRENCY: String(clusterWorkers) }));
    const all = runs({ app, baseline, other, otherLabel: ` — the server of ${compareWith}`, cluster, workers: clusterWorkers }, apiKey, userId);
    for (const { target } of all) await load(target, { connections, seconds: 2 }); // warm-up
    // The targets take turns, round after round: a burst of load from elsewhere on the machine then
    // hits one round of every target rather than the whole measure of one.
    const rounds: Measured[][] = all.map(() => []);
    for (let round = 0; round < roundCount; round++) {
      for (const [i, { server, target }] of all.entries()) rounds[i].push(await measured(server, target, { connections, seconds }, server !== cluster));
    }
    return section(
      `User lookup, ${connections} connections, ${roundCount} rounds of ${seconds} s each; per target its median round by req/s`,
      table(rounds.map(median)),
    );
  } finally {
    for (const server of started.reverse()) await server.stop();
  }
}
