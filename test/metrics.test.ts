import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { completeDeposit, simulateUsdDeposit, userWithUsdAccount } from "./support/deposit-updates.js";
import { gql, rest } from "./support/http.js";
import { newTenant, startServer, type TestServer } from "./support/server.js";
import { needs, REQUIREMENTS } from "./support/requirements.js";
import { settle, subscribeWs } from "./support/subscriptions.js";
import { bankWithdrawalBody, fundedUser } from "./support/withdrawals.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

/** The scrape as `name{labels}` → value, labels in the order the server writes them. */
async function scrape(target: TestServer = server, headers: Record<string, string> = {}) {
  const res = await fetch(`${target.url}/metrics`, { headers });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  const samples = new Map<string, number>();
  for (const line of (await res.text()).split("\n")) {
    const sample = /^([a-zA-Z_:][\w:]*(?:\{.*\})?) (\S+)$/.exec(line);
    if (sample) samples.set(sample[1], Number(sample[2]));
  }
  return samples;
}

/** How much each named series moved while `work` ran. */
async function deltas(series: string[], work: () => Promise<unknown>) {
  const before = await scrape();
  await work();
  const after = await scrape();
  return Object.fromEntries(series.map((name) => [name, (after.get(name) ?? 0) - (before.get(name) ?? 0)]));
}

describe("GET /metrics", () => {
  it("counts HTTP requests by route pattern and status, never by the ids in the URL", async () => {
    const tenant = await newTenant(server);
    const unknownUser = crypto.randomUUID();
    const notFound = 'http_requests_total{method="GET",route="/v1/user/:userId",status="404"}';
    const timed = 'http_request_duration_seconds_count{method="GET",route="/v1/user/:userId",status="404"}';
    const moved = await deltas([notFound, timed], () => rest(server, "GET", `/v1/user/${unknownUser}`, { headers: tenant.headers }));
    expect(moved).toEqual({ [notFound]: 1, [timed]: 1 });
    expect([...(await scrape()).keys()].some((name) => name.includes(unknownUser))).toBe(false);
  });

  it("labels a path sent in another case with its route's own casing (one series, not one per spelling)", async () => {
    const tenant = await newTenant(server);
    const graphql = 'http_requests_total{method="POST",route="/graphql",status="200"}';
    const docs = 'http_requests_total{method="GET",route="/docs/",status="200"}';
    const moved = await deltas([graphql, docs], async () => {
      for (const path of ["/GRAPHQL", "/GraphQL"]) {
        const res = await fetch(`${server.url}${path}`, { method: "POST", headers: { ...tenant.headers, "content-type": "application/json" }, body: JSON.stringify({ query: "{ me { id } }" }) });
        expect(res.status).toBe(200);
      }
      expect((await fetch(`${server.url}/DOCS/`)).status).toBe(200);
    });
    expect(moved).toEqual({ [graphql]: 2, [docs]: 1 });
    expect([...(await scrape()).keys()].filter((name) => /route="\/(GRAPHQL|GraphQL|DOCS)/.test(name))).toEqual([]);
  });

  it("counts GraphQL over HTTP under /graphql, also a document's repeats", async () => {
    const tenant = await newTenant(server);
    const answered = 'http_requests_total{method="POST",route="/graphql",status="200"}';
    const query = `query Repeated${crypto.randomUUID().replaceAll("-", "")} { me { id } }`;
    const moved = await deltas([answered], async () => {
      for (let i = 0; i < 3; i++) expect((await gql(server, query, {}, tenant.headers)).status).toBe(200);
    });
    expect(moved).toEqual({ [answered]: 3 });
  });

  it("counts GraphQL operations and their errors by type, never by name or URL (callers' queries stay private, series bounded)", async () => {
    const tenant = await newTenant(server);
    const queries = 'graphql_envelop_request{operationType="query"}';
    const secret = crypto.randomUUID();
    const name = `Op${crypto.randomUUID().replaceAll("-", "")}`;
    const queryErrors = async () =>
      [...(await scrape())].filter(([series]) => series.startsWith("graphql_envelop_error_result{") && series.includes('operationType="query"')).reduce((sum, [, value]) => sum + value, 0);
    const errorsBefore = await queryErrors();
    const moved = await deltas([queries], async () => {
      await gql(server, `query ${name} { me { id } }`, {}, tenant.headers);
      await gql(server, 'query Broken { user(id: "not-a-uuid") { id } }', {}, tenant.headers);
      const viaGet = new URLSearchParams({ query: "query ($id: ID!) { user(id: $id) { id } }", variables: JSON.stringify({ id: secret }) });
      await fetch(`${server.url}/graphql?${viaGet}`, { headers: { ...tenant.headers, accept: "application/graphql-response+json" } });
    });
    expect(moved).toEqual({ [queries]: 3 });
    expect(await queryErrors()).toBe(errorsBefore + 2);
    const exposition = await (await fetch(`${server.url}/metrics`)).text();
    expect(exposition).not.toContain(secret);
    expect(exposition).not.toContain(name);
  });

  it("counts deposits by status, withdrawals and ledger journals where they happen", async () => {
    const tenant = await newTenant(server);
    const userId = await userWithUsdAccount(server, tenant);
    const series = [
      'fintech_deposits_total{status="PENDING"}',
      'fintech_deposits_total{status="COMPLETED"}',
      'fintech_ledger_journals_total{type="DEPOSIT"}',
      'fintech_withdrawals_total{type="BANK",status="PENDING"}',
      'fintech_ledger_journals_total{type="WITHDRAWAL"}',
      'fintech_provider_webhooks_total{provider="sandbox-fiat",outcome="applied"}',
    ];
    const moved = await deltas(series, async () => {
      await completeDeposit(server, tenant, await simulateUsdDeposit(server, tenant, userId, 25));
      // The deposit was converted and forwarded on-chain: the withdrawal needs a user with dollars.
      const payee = await fundedUser(server, tenant, "USD", "10");
      const res = await rest(server, "POST", "/v1/withdrawal/usd", { headers: tenant.headers, body: bankWithdrawalBody(payee, "USD", 5) });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    });
    expect(moved).toMatchObject({
      'fintech_deposits_total{status="PENDING"}': 1,
      'fintech_deposits_total{status="COMPLETED"}': 1,
      'fintech_withdrawals_total{type="BANK",status="PENDING"}': 1,
      'fintech_ledger_journals_total{type="WITHDRAWAL"}': 1,
    });
    expect(moved['fintech_ledger_journals_total{type="DEPOSIT"}']).toBeGreaterThanOrEqual(1);
  });

  it("shows open websocket connections", async () => {
    const tenant = await newTenant(server);
    const before = (await scrape()).get("websocket_connections")!;
    const subscriber = subscribeWs(server.url, tenant.headers, "subscription { depositUpdated { id } }");
    await settle();
    expect((await scrape()).get("websocket_connections")).toBe(before + 1);
    subscriber.close();
    await expect.poll(async () => (await scrape()).get("websocket_connections")).toBe(before);
  });

  it("shows the PostgreSQL pool's connections (PostgreSQL only: the embedded database has no pool)", needs(REQUIREMENTS.postgres), async () => {
    const samples = await scrape();
    expect(samples.get("db_pool_connections")).toBeGreaterThanOrEqual(1);
    expect(samples.has("db_pool_idle_connections")).toBe(true);
    expect(samples.get("db_pool_waiting_requests")).toBe(0);
  });
});

describe("GET /metrics with METRICS_TOKEN set", () => {
  const token = "metrics-token-for-the-test-0123456789";
  let guarded: TestServer;
  beforeAll(async () => {
    guarded = await startServer({ env: { METRICS_TOKEN: token } });
  });
  afterAll(() => guarded?.stop());

  it.each<{ sent: string; headers: Record<string, string>; status: number }>([
    { sent: "no Authorization header", headers: {}, status: 401 },
    { sent: "another token", headers: { authorization: "Bearer metrics-token-for-the-test-0123456780" }, status: 401 },
    { sent: "the token without the Bearer scheme", headers: { authorization: token }, status: 401 },
    { sent: "the token", headers: { authorization: `Bearer ${token}` }, status: 200 },
  ])("answers $status to $sent", async ({ headers, status }) => {
    const res = await fetch(`${guarded.url}/metrics`, { headers });
    expect(res.status).toBe(status);
    if (status === 401) expect(await res.json()).toEqual({ error: expect.any(String) });
    else expect(await res.text()).toContain("http_requests_total");
  });
});
