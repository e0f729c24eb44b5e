import { readFileSync } from "node:fs";
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClientWithKey } from "../src/keys/first-key.js";
import { openDatabase, type Database } from "../src/db/database.js";
import { ApiKeyService } from "../src/keys/service.js";
import { createLogger } from "../src/logger.js";
import { userInput } from "./support/http.js";
import { REQUIREMENTS, needs } from "./support/requirements.js";
import { startServerProcess, type ServerProcess } from "./support/server-process.js";
import { testDatabaseUrl } from "./support/server.js";

const FALLBACK_LOG = "the shared rate limiter did not answer";

/**
 * WEB_CONCURRENCY=2: the rate-limit budgets live in the supervisor. Here the supervisor stops
 * answering (SIGSTOP: it is alive but silent, as on a machine too loaded to schedule it), and the
 * workers must go on answering, counting in their own memory. The workers accept connections
 * themselves (NODE_CLUSTER_SCHED_POLICY=none), so a stopped supervisor does not also stop new
 * connections from reaching them.
 */
describe("a clustered server whose supervisor does not answer the rate limiter (PostgreSQL)", needs(REQUIREMENTS.postgres), () => {
  let db: Database;
  let server: ServerProcess;
  let supervisorPid: number;

  beforeAll(async () => {
    server = await startServerProcess({ DATABASE_URL: testDatabaseUrl!, WEB_CONCURRENCY: "2", NODE_CLUSTER_SCHED_POLICY: "none" });
    // The supervisor is the parent of a worker (field 4 of /proc/<pid>/stat).
    const workerPid = JSON.parse(server.output.find((line) => line.includes('"server started"'))!).pid;
    supervisorPid = Number(readFileSync(`/proc/${workerPid}/stat`, "utf8").split(") ")[1].split(" ")[1]);
    db = await openDatabase({ url: testDatabaseUrl, logger: createLogger("silent"), poolSize: 2 });
  }, 100_000);
  afterAll(async () => {
    if (supervisorPid) process.kill(supervisorPid, "SIGCONT");
    await server?.stop();
    await db?.close();
  });

  function call(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; text: string }> {
    const text = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = request(`${server.url}${path}`, { method, agent: false, headers: { ...headers, ...(text ? { "content-type": "application/json" } : {}) } }, (res) => {
        let answer = "";
        res.on("data", (chunk) => (answer += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text: answer }));
      });
      req.on("error", reject);
      req.end(text);
    });
  }

  it("answers every request (no 5xx), counts each call in rate_limiter_fallbacks_total, and logs it at most once a minute per worker", async () => {
    const { apiKey } = await createClientWithKey(db.prisma, new ApiKeyService(db.prisma), { email: `outage-${crypto.randomUUID()}@example.com` });
    const headers = { "x-api-key": apiKey.key };
    expect((await call("GET", "/v1/user", headers)).status).toBe(200);

    process.kill(supervisorPid, "SIGSTOP");
    let answers: { status: number; text: string }[];
    try {
      answers = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          i % 3 === 0
            ? call("POST", "/v1/user", { ...headers, "idempotency-key": `outage-${crypto.randomUUID()}` }, userInput())
            : call("POST", "/graphql", headers, { query: "{ users { id } }" }),
        ),
      );
      // A second round, once each worker has found the supervisor silent: counted locally at once.
      answers.push(...(await Promise.all(Array.from({ length: 6 }, () => call("GET", "/v1/user", headers)))));
    } finally {
      process.kill(supervisorPid, "SIGCONT");
    }
    for (const answer of answers) expect(answer.status, answer.text).toBeLessThan(300);

    // /metrics is the supervisor's sum of the workers' registries: readable again now it answers.
    const metrics = await call("GET", "/metrics", {});
    const counted = [...metrics.text.matchAll(/^rate_limiter_fallbacks_total\{budget="(\w+)"\} (\d+)/gm)];
    const total = counted.reduce((sum, [, , value]) => sum + Number(value), 0);
    expect(counted.map(([, budget]) => budget)).toEqual(expect.arrayContaining(["ip", "client"]));
    // Each of the 18 requests drew on the IP and client budgets.
    expect(total).toBeGreaterThanOrEqual(18 * 2);
    const logged = server.output.filter((line) => line.includes(FALLBACK_LOG));
    expect(logged.length).toBeGreaterThan(0);
    expect(logged.length, "one line per worker within the minute").toBeLessThanOrEqual(2);
  }, 60_000);
});
