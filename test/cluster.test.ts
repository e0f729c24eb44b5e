import { request } from "node:http";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClientWithKey } from "../src/keys/first-key.js";
import { openDatabase, type Database } from "../src/db/database.js";
import { ApiKeyService } from "../src/keys/service.js";
import { createLogger } from "../src/logger.js";
import { webhookSecretFor } from "../src/webhooks/secrets.js";
import { completeDeposit, simulateUsdDeposit, userWithUsdAccount } from "./support/deposit-updates.js";
import { signature } from "./support/deposits.js";
import { createUser } from "./support/http.js";
import { SHARED_SECRETS, startServerProcess, type ServerProcess } from "./support/server-process.js";
import { REQUIREMENTS, needs } from "./support/requirements.js";
import { testDatabaseUrl, type Tenant, type TestServer } from "./support/server.js";
import { settle, subscribeWs } from "./support/subscriptions.js";
import { patient } from "./support/patience.js";

/**
 * WEB_CONCURRENCY=2 on PostgreSQL: one port, two worker processes. What holds across instances must
 * hold across workers. Each request here goes on its own connection (node:cluster hands connections
 * to the workers in turn), and the access log's `worker` says which worker answered it.
 */
describe("a clustered server (WEB_CONCURRENCY=2)", needs(REQUIREMENTS.postgres), () => {
  let db: Database;
  let keys: ApiKeyService;
  let server: ServerProcess;
  let freshDatabase: string;

  beforeAll(async () => {
    // A database of its own: both workers start on it at once, so both run the migrations under the lock.
    const admin = new pg.Client({ connectionString: testDatabaseUrl });
    await admin.connect();
    const name = `cluster_${Date.now()}_${process.pid}`;
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const url = new URL(testDatabaseUrl!);
    url.pathname = `/${name}`;
    freshDatabase = url.toString();
    server = await startServerProcess({ DATABASE_URL: freshDatabase, WEB_CONCURRENCY: "2", SIGN_IN_RATE_LIMIT_PER_MINUTE: "3" });
    db = await openDatabase({ url: freshDatabase, logger: createLogger("silent") });
    keys = new ApiKeyService(db.prisma);
  }, patient(90_000));
  afterAll(async () => {
    await server?.stop();
    await db?.close();
    if (freshDatabase) {
      const admin = new pg.Client({ connectionString: testDatabaseUrl });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${new URL(freshDatabase).pathname.slice(1)} WITH (FORCE)`);
      await admin.end();
    }
  });

  async function newTenant(): Promise<Tenant> {
    const { client, apiKey } = await createClientWithKey(db.prisma, keys, { email: `cluster-${crypto.randomUUID()}@example.com` });
    return { clientId: client.id, apiKey: apiKey.key, headers: { "x-api-key": apiKey.key } };
  }

  /** One request on a connection of its own; which worker answered it, from its access-log line. */
  async function once(method: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; text: string; worker: number }> {
    const requestId = `cluster-${crypto.randomUUID()}`;
    const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(`${server.url}${path}`, { method, agent: false, headers: { ...headers, "x-request-id": requestId, ...(body ? { "content-type": "application/json" } : {}) } }, (res) => {
        let text = "";
        res.on("data", (chunk) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on("error", reject);
      req.end(body);
    });
    let line: string | undefined;
    await expect.poll(() => (line = server.output.find((entry) => entry.includes(requestId)))).toBeDefined();
    return { status, text, worker: JSON.parse(line!).worker };
  }

  it("starts two workers on one port, each answering requests", async () => {
    const started = server.output.filter((line) => line.includes('"server started"')).map((line) => JSON.parse(line).worker);
    expect(new Set(started)).toEqual(new Set([1, 2]));
    const workers = new Set<number>();
    for (let i = 0; i < 6; i++) workers.add((await once("GET", "/v1/openapi.json", {})).worker);
    expect(workers).toEqual(new Set([1, 2]));
  });

  it("refuses a revoked API key on every worker within a second, though both had it cached", async () => {
    const tenant = await newTenant();
    const created = JSON.parse((await once("POST", "/v1/api-keys", tenant.headers)).text);
    const second = { "x-api-key": created.key as string };
    const warmed = new Set<number>();
    for (let i = 0; i < 6; i++) {
      const { status, worker } = await once("GET", "/v1/api-keys", second);
      expect(status).toBe(200);
      warmed.add(worker);
    }
    expect(warmed.size).toBe(2);
    const revokedAt = Date.now();
    expect((await once("DELETE", `/v1/api-keys/${created.id}`, tenant.headers)).status).toBe(200);
    const refusedBy = new Set<number>();
    while (refusedBy.size < 2 && Date.now() - revokedAt < 2000) {
      const { status, worker } = await once("GET", "/v1/api-keys", second);
      if (status === 401) refusedBy.add(worker);
    }
    expect(refusedBy).toEqual(new Set([1, 2]));
    expect(Date.now() - revokedAt).toBeLessThan(1100);
  });

  it("delivers a deposit's updates to subscribers on both workers", async () => {
    const tenant = await newTenant();
    const overHttp = server as unknown as TestServer;
    const userId = await userWithUsdAccount(overHttp, tenant);
    // Two websocket connections in a row: the cluster gives them to the two workers in turn.
    const subscribers = [0, 1].map(() => subscribeWs(server.url, { "x-api-key": tenant.apiKey }, "subscription { depositUpdated { id status } }"));
    try {
      await settle();
      const depositId = await simulateUsdDeposit(overHttp, tenant, userId);
      for (const subscriber of subscribers) expect((await subscriber.take()).data).toEqual({ depositUpdated: { id: depositId, status: "PENDING" } });
      await completeDeposit(overHttp, tenant, depositId);
      for (const subscriber of subscribers) expect((await subscriber.take()).data).toEqual({ depositUpdated: { id: depositId, status: "COMPLETED" } });
    } finally {
      subscribers.forEach((subscriber) => subscriber.close());
    }
  });

  it("applies a provider event sent to both workers at once exactly once", async () => {
    const tenant = await newTenant();
    const userId = await createUser(server as unknown as TestServer, tenant);
    const account = JSON.parse((await once("POST", "/v1/virtual-account/NGN", tenant.headers, JSON.stringify({ userId }))).text);
    const event = JSON.stringify({
      id: `evt_${crypto.randomUUID()}`,
      type: "deposit.received",
      data: { reference: `ref_${crypto.randomUUID()}`, accountNumber: account.accountNumber, amount: "100.00", currency: "NGN", paymentReference: "NIP1" },
    });
    const secret = webhookSecretFor({ webhookSecret: SHARED_SECRETS.WEBHOOK_SECRET, webhookProviderSecrets: {} }, "sandbox-ngn");
    const answers = await Promise.all(Array.from({ length: 6 }, () => once("POST", "/v1/webhooks/sandbox-ngn", { "x-webhook-signature": signature(secret, event) }, event)));
    expect(new Set(answers.map((answer) => answer.worker))).toEqual(new Set([1, 2]));
    expect(answers.map((answer) => answer.status)).toEqual(Array(6).fill(200));
    expect(answers.filter((answer) => !JSON.parse(answer.text).duplicate)).toHaveLength(1);
    expect(await db.prisma.deposit.count({ where: { userId } })).toBe(1);
  });

  it("keeps one rate-limit budget for all its workers, not one each", async () => {
    const answers = [];
    for (let i = 0; i < 8; i++) answers.push(await once("POST", "/v1/client-auth/otp", {}, JSON.stringify({ email: `budget-${crypto.randomUUID()}@example.com` })));
    expect(new Set(answers.map((answer) => answer.worker))).toEqual(new Set([1, 2]));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 429, 429, 429, 429, 429]);
  });

  it("answers /metrics for the whole server: requests served by both workers add up in one scrape, whichever worker is scraped", async () => {
    const ROUTE = /^http_requests_total\{(?=[^}]*method="GET")(?=[^}]*route="\/v1\/openapi\.json")(?=[^}]*status="200")[^}]*\} (\d+)$/m;
    /** One scrape on a connection of its own (the cluster hands connections to the workers in turn): the count of those requests. */
    const scrape = async () => {
      const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = request(`${server.url}/metrics`, { agent: false }, (res) => {
          let text = "";
          res.on("data", (chunk) => (text += chunk));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
        });
        req.on("error", reject).end();
      });
      expect(status).toBe(200);
      return Number(ROUTE.exec(text)?.[1] ?? 0);
    };
    const before = await scrape();
    const servedBy = new Set<number>();
    for (let i = 0; i < 6; i++) servedBy.add((await once("GET", "/v1/openapi.json", {})).worker);
    expect(servedBy).toEqual(new Set([1, 2]));
    const counts = [];
    for (let i = 0; i < 4; i++) counts.push(await scrape());
    expect(counts).toEqual(Array(4).fill(before + 6));
  });

  it("replaces a worker that dies", async () => {
    const started = () => server.output.filter((line) => line.includes('"server started"')).map((line) => JSON.parse(line) as { worker: number; pid: number });
    const before = started();
    process.kill(before[0].pid, "SIGKILL");
    await expect.poll(() => started().length, { timeout: patient(30_000) }).toBe(before.length + 1);
    const replacement = started().at(-1)!;
    expect(replacement.worker).toBeGreaterThan(Math.max(...before.map((line) => line.worker)));
    const workers = new Set<number>();
    for (let i = 0; i < 6; i++) workers.add((await once("GET", "/v1/openapi.json", {})).worker);
    expect(workers).toEqual(new Set([before[1].worker, replacement.worker]));
  });

  it("stops both workers and itself on SIGTERM", async () => {
    await server.stop();
    expect(server.output.filter((line) => line.includes('"shutting down"'))).toHaveLength(3);
  });
});
