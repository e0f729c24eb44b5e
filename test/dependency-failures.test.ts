import { afterEach, describe, expect, it } from "vitest";
import { needs, REQUIREMENTS } from "./support/requirements.js";
import { setTimeout as sleep } from "node:timers/promises";
import { newTenant, startServer, testDatabaseUrl, type TestServer } from "./support/server.js";
import { rest, userInput } from "./support/http.js";
import { startTcpProxy, type TcpProxy } from "./support/tcp-proxy.js";

// PostgreSQL and Redis are shared by every test file: each is taken away through a proxy of the test's own.
let server: TestServer | undefined;
let proxy: TcpProxy | undefined;
afterEach(async () => {
  await proxy?.restore().catch(() => undefined);
  await server?.stop();
  await proxy?.close();
  server = proxy = undefined;
});

const through = (url: string, port: number) => {
  const proxied = new URL(url);
  proxied.hostname = "127.0.0.1";
  proxied.port = String(port);
  return proxied.toString();
};

async function until(condition: () => Promise<boolean>, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await sleep(100);
  }
}

describe("PostgreSQL unreachable mid-traffic (PostgreSQL)", needs(REQUIREMENTS.postgres), () => {
  it("answers 503 with Retry-After at once, /readyz says so, and the server recovers by itself", async () => {
    const target = new URL(testDatabaseUrl!);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    server = await startServer({ env: { DATABASE_URL: through(testDatabaseUrl!, proxy.port) } });
    const tenant = await newTenant(server);
    const keyed = { ...tenant.headers, "idempotency-key": `outage-${crypto.randomUUID()}` };
    const body = userInput();

    const statuses: number[] = [];
    let sending = true;
    const traffic = Array.from({ length: 4 }, async () => {
      while (sending) statuses.push((await rest(server!, "GET", "/v1/user", { headers: tenant.headers })).status);
    });
    await sleep(300);
    await proxy.cut();
    // Past the credential cache (1 s), so that authentication needs the database too.
    await sleep(1200);

    const started = performance.now();
    const list = await rest(server, "GET", "/v1/user", { headers: tenant.headers });
    const write = await rest(server, "POST", "/v1/user", { headers: keyed, body });
    const graphql = await rest(server, "POST", "/graphql", { headers: tenant.headers, body: { query: "{ users { id } }" } });
    const elapsed = performance.now() - started;
    const ready = await rest(server, "GET", "/readyz");
    sending = false;
    await Promise.all(traffic);

    for (const res of [list, write, graphql]) {
      expect(res.status, JSON.stringify(res.body)).toBe(503);
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    }
    expect(list.body.code).toBe("SERVICE_UNAVAILABLE");
    expect(graphql.body.errors[0].extensions.code).toBe("SERVICE_UNAVAILABLE");
    expect(elapsed, "three requests fail fast").toBeLessThan(3000);
    expect(ready.status).toBe(503);
    expect(ready.headers.get("retry-after")).toBeTruthy();
    expect((await rest(server, "GET", "/healthz")).status).toBe(200);
    expect(new Set(statuses), "every answer during the outage is a success or a 503, never a 500").toEqual(new Set(statuses.filter((s) => s === 200 || s === 503)));
    expect(statuses).toContain(503);

    await proxy.restore();
    await until(async () => (await rest(server!, "GET", "/readyz")).status === 200, 20_000);
    expect((await rest(server, "GET", "/v1/user", { headers: tenant.headers })).status).toBe(200);
    const retried = await rest(server, "POST", "/v1/user", { headers: keyed, body });
    expect(retried.status, "the key refused during the outage runs now").toBe(201);
    expect(retried.headers.get("idempotent-replayed")).toBeNull();
  }, 60_000);
});

describe("Redis unreachable (Redis and PostgreSQL)", needs(REQUIREMENTS.redisUrl, REQUIREMENTS.postgres), () => {
  it("rate limits count in memory meanwhile, publications are dropped without harm, and Redis is used again once back", async () => {
    const target = new URL(process.env.TEST_REDIS_URL!);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
    const perMinute = 8;
    server = await startServer({ env: { REDIS_URL: through(process.env.TEST_REDIS_URL!, proxy.port), RATE_LIMIT_PER_MINUTE: String(perMinute), SANDBOX: "on" } });
    const tenant = await newTenant(server);
    const user = await rest(server, "POST", "/v1/user", { headers: tenant.headers, body: userInput() });
    expect(user.status).toBe(201);

    await proxy.cut();
    const started = performance.now();
    // A deposit publishes its update on the bus, which cannot reach Redis.
    const deposit = await rest(server, "POST", "/v1/sandbox/deposits", { headers: tenant.headers, body: { userId: user.body.id, currency: "USDC", amount: "5" } });
    expect(deposit.status, JSON.stringify(deposit.body)).toBe(201);
    const statuses: number[] = [];
    for (let i = 0; i < perMinute; i++) statuses.push((await rest(server, "GET", "/v1/user", { headers: tenant.headers })).status);
    expect(performance.now() - started, "nothing waits for Redis").toBeLessThan(5000);
    // This instance's own count: the deposit and 7 reads use the budget of 8, the 8th read is refused.
    expect(statuses).toEqual([...Array(perMinute - 1).fill(200), 429]);
    await sleep(1500);
    expect((await rest(server, "GET", "/healthz")).status, "the process is still up").toBe(200);

    await proxy.restore();
    const other = await newTenant(server);
    await until(async () => (await rest(server!, "GET", "/v1/user", { headers: other.headers })).status === 200, 20_000);
  }, 60_000);
});
