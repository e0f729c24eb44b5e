// Deposit-to-subscriber latency: sandbox deposits are completed over REST and the time until each
// COMPLETED update reaches a graphql-ws subscriber is measured, for deposits spread over several users
// and for one hot user, beside a bare LISTEN/NOTIFY round trip.
import http from "node:http";
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import { startApp } from "./app-server.js";
import { Arrivals } from "./arrivals.js";
import { mapConcurrent, range } from "./drive.js";
import { closedLoopFloorMs, CORES, machineBusyMs } from "./machine-cpu.js";
import { notifyRoundTrips } from "./notify-latency.js";
import { roundTripFloor } from "./round-trip-floor.js";
import { cpuMsBetween, PROBED, probe } from "./probe.js";
import type { Started } from "./processes.js";
import { markdownTable, ms, percentile, ratio, section } from "./report.js";
import { newClient, newUsers, withDatabase } from "./setup.js";

export type DepositLatencyOptions = { databaseUrl: string; count: number; concurrency: number; users: number; rounds: number };

const DEPOSIT_UPDATED = "subscription ($userId: ID) { depositUpdated(userId: $userId) { id status } }";
const WARM_UP = 200;

type Api = (path: string, body?: Record<string, unknown>) => Promise<{ status: number; body: any }>;

/**
 * POSTs over keep-alive connections with node:http: the driver shares the machine with the server and
 * PostgreSQL, and fetch (undici) spent about twice the CPU per request, taken from them.
 */
function restApi(baseUrl: string, apiKey: string): Api {
  const agent = new http.Agent({ keepAlive: true });
  return (path, body = {}) =>
    new Promise((resolve, reject) => {
      const payload = JSON.stringify(body);
      const headers = { "x-api-key": apiKey, "content-type": "application/json", "content-length": Buffer.byteLength(payload) };
      const request = http.request(`${baseUrl}${path}`, { method: "POST", agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          try {
            resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString()) });
          } catch (err) {
            reject(err);
          }
        });
        res.on("error", reject);
      });
      request.on("error", reject);
      request.end(payload);
    });
}

async function expectStatus(call: Promise<{ status: number; body: any }>, status: number) {
  const res = await call;
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Every depositUpdated result of the client (every user) becomes an arrival keyed `${id}:${status}`. */
function subscribe(baseUrl: string, apiKey: string, arrivals: Arrivals): Client {
  const client = createClient({ url: `${baseUrl.replace(/^http/, "ws")}/graphql`, webSocketImpl: WebSocket, connectionParams: { "x-api-key": apiKey } });
  client.subscribe(
    { query: DEPOSIT_UPDATED },
    {
      next: ({ data, errors }) => {
        // A broken result is reported here; the wait for it then times out and fails the run.
        if (errors) return void process.stderr.write(`subscription error: ${JSON.stringify(errors)}\n`);
        const deposit = (data as { depositUpdated: { id: string; status: string } }).depositUpdated;
        arrivals.arrived(`${deposit.id}:${deposit.status}`);
      },
      error: (err) => process.stderr.write(`subscription ended: ${JSON.stringify(err)}\n`),
      complete: () => undefined,
    },
  );
  return client;
}

const newDeposit = (api: Api, userId: string): Promise<string> =>
  expectStatus(api("/v1/sandbox/deposits", { userId, currency: "USD", amount: 10 }), 201).then((deposit) => deposit.id);

/** The subscription is live once a new deposit's PENDING update comes through (no protocol message says so). */
async function untilSubscribed(api: Api, userId: string, arrivals: Arrivals): Promise<string> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const id = await newDeposit(api, userId);
    if (await arrivals.wait(`${id}:PENDING`, 1000).then(() => true, () => false)) return id;
  }
  throw new Error("the subscription never delivered an update");
}

type Completion = { response: number; update: number };

/** Milliseconds from sending each completion to its response, and to the subscriber receiving its COMPLETED update. */
async function completionLatencies(api: Api, ids: string[], arrivals: Arrivals, concurrency: number): Promise<Completion[]> {
  return mapConcurrent(ids, concurrency, async (id) => {
    const arrival = arrivals.wait(`${id}:COMPLETED`);
    const start = performance.now();
    await expectStatus(api(`/v1/sandbox/deposits/${id}/complete`), 200);
    const response = performance.now() - start;
    return { response, update: (await arrival) - start };
  });
}

/** `count` deposits spread round-robin over `users` (consecutive completions, which run together, are of different users). */
const depositsOf = (api: Api, users: string[], count: number, concurrency: number) =>
  mapConcurrent(range(count), concurrency, (i) => newDeposit(api, users[i % users.length]));

/** The completions, and the CPU per completion while they ran: the server's, and the whole machine's. */
type Scenario = { completions: Completion[]; serverCpuMs: number; machineCpuMs: number };
type Scenarios = { spread: Scenario[]; hot: Scenario[] };

const updateP99 = (scenario: Scenario) => percentile(scenario.completions.map((c) => c.update), 99);

/** The round whose update p99 is the median of the rounds': a burst of load from elsewhere spoils one round, not the figure. */
const medianRound = (rounds: Scenario[]) => [...rounds].sort((a, b) => updateP99(a) - updateP99(b))[Math.floor((rounds.length - 1) / 2)];

async function measured(app: Started, run: () => Promise<Completion[]>): Promise<Scenario> {
  const before = await probe(app);
  const machineBefore = machineBusyMs();
  const completions = await run();
  const machineCpuMs = (machineBusyMs() - machineBefore) / completions.length;
  return { completions, serverCpuMs: cpuMsBetween(before, await probe(app)) / completions.length, machineCpuMs };
}

async function productLatencies(databaseUrl: string, { count, concurrency, users: userCount, rounds }: DepositLatencyOptions): Promise<Scenarios> {
  const { apiKey, users } = await withDatabase(databaseUrl, async ({ prisma }) => {
    const { apiKey, clientId } = await newClient(prisma, "test");
    return { apiKey, users: await newUsers(prisma, clientId, userCount + 1) };
  });
  const [hotUser, ...spreadUsers] = users;
  // Sandbox on, and deposits that never settle by themselves: only the measured completion settles them.
  const app = await startApp(databaseUrl, { SANDBOX: "1", SANDBOX_SETTLE_MS: String(24 * 3600_000) }, PROBED);
  const arrivals = new Arrivals();
  let subscriber: Client | undefined;
  try {
    const api = restApi(app.url, apiKey);
    await mapConcurrent(users, concurrency, (userId) => expectStatus(api("/v1/virtual-account/usd", { userId }), 200));
    subscriber = subscribe(app.url, apiKey, arrivals);
    const first = await untilSubscribed(api, hotUser, arrivals);
    const warmUp = [first, ...(await depositsOf(api, users, WARM_UP - 1, concurrency))];
    await completionLatencies(api, warmUp, arrivals, concurrency);
    const scenarios: Scenarios = { spread: [], hot: [] };
    // The two scenarios take turns, round after round.
    for (let round = 0; round < rounds; round++) {
      const spreadIds = await depositsOf(api, spreadUsers, count, concurrency);
      scenarios.spread.push(await measured(app, () => completionLatencies(api, spreadIds, arrivals, concurrency)));
      const hotIds = await depositsOf(api, [hotUser], count, concurrency);
      scenarios.hot.push(await measured(app, () => completionLatencies(api, hotIds, arrivals, concurrency)));
    }
    return scenarios;
  } finally {
    await subscriber?.dispose();
    await app.stop();
  }
}

export async function benchDepositLatency(options: DepositLatencyOptions): Promise<string> {
  const { databaseUrl, count, concurrency, users, rounds } = options;
  const floor = await notifyRoundTrips(databaseUrl, { count, concurrency, warmUp: WARM_UP });
  const sameRoundTrips = await roundTripFloor(databaseUrl, { count, concurrency, warmUp: WARM_UP });
  const scenarios = await productLatencies(databaseUrl, options);
  const [spread, hot] = [medianRound(scenarios.spread), medianRound(scenarios.hot)];
  const p99s = (all: Scenario[]) => all.map((scenario) => ms(updateP99(scenario))).join(", ");
  const complete = "REST POST /v1/sandbox/deposits/{id}/complete → graphql-ws depositUpdated COMPLETED";
  const rows = [
    { name: "baseline: PostgreSQL NOTIFY → LISTEN round trip (pg)", latencies: floor },
    { name: "for reference: a completion's 12 database round trips in plain pg, trivial rows (bench/round-trip-floor.ts)", latencies: sameRoundTrips },
    { name: `${complete}, ${users} users`, latencies: spread.completions.map((c) => c.update) },
    { name: `for reference: the complete request's own response time, ${users} users`, latencies: spread.completions.map((c) => c.response) },
    { name: `${complete}, one hot user`, latencies: hot.completions.map((c) => c.update) },
    { name: "for reference: the complete request's own response time, one hot user", latencies: hot.completions.map((c) => c.response) },
  ];
  const cpu = [
    `Server CPU per completion: ${ms(spread.serverCpuMs)} ms (${users} users), ${ms(hot.serverCpuMs)} ms (one hot user).`,
    `Machine CPU per completion (server, PostgreSQL and this driver together): ${ms(spread.machineCpuMs)} ms (${users} users), ${ms(hot.machineCpuMs)} ms (one hot user);` +
      ` at that cost, ${concurrency} in flight on ${CORES} cores cannot average less than ${ms(closedLoopFloorMs(concurrency, spread.machineCpuMs))} ms each (${users} users; Little's law).`,
    `Update p99 of each round (each row above is the median round): ${users} users ${p99s(scenarios.spread)}; one hot user ${p99s(scenarios.hot)} ms.`,
  ].join("\n");
  const [p50, p99] = [percentile(floor, 50), percentile(floor, 99)];
  return section(
    `Deposit-to-subscriber latency, ${count} USD deposits (virtual account → conversion → forward) per row and round, ${rounds} rounds, ${concurrency} completions at a time, one graphql-ws subscriber`,
    markdownTable(
      ["path", "count", "p50 ms", "p99 ms", "× baseline p50", "× baseline p99"],
      rows.map((r) => {
        const [rp50, rp99] = [percentile(r.latencies, 50), percentile(r.latencies, 99)];
        return [r.name, r.latencies.length, ms(rp50), ms(rp99), ratio(rp50, p50), ratio(rp99, p99)];
      }),
    ),
    cpu,
  );
}
