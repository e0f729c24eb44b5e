import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { needs, REQUIREMENTS } from "./support/requirements.js";
import { startServer, testDatabaseUrl, type TestServer } from "./support/server.js";

// `npm run client:create` as an operator runs it for the first production key: NODE_ENV=production
// and the database, nothing else (no SMTP_URL, no secrets): it reads only what it uses.

const run = promisify(execFile);

function createClient(env: Record<string, string>) {
  return run(
    join(process.cwd(), "node_modules/.bin/tsx"),
    ["scripts/create-client.ts", "--email", `ops-${crypto.randomUUID()}@example.com`, "--name", "Ops"],
    { cwd: process.cwd(), env: { PATH: process.env.PATH, NODE_ENV: "production", ...env }, timeout: 60_000 },
  );
}

describe("npm run client:create in production", { timeout: 90_000 }, () => {
  let server: TestServer | undefined;
  beforeAll(async () => {
    if (testDatabaseUrl) server = await startServer();
  });
  afterAll(() => server?.stop());

  it("needs only DATABASE_URL: it prints a key, and the server accepts it", needs(REQUIREMENTS.postgres), async () => {
    const { stdout } = await createClient({ DATABASE_URL: testDatabaseUrl! });
    const key = /^api key (\S+)/m.exec(stdout)?.[1];
    expect(key, stdout).toMatch(/^fpk_live_/);
    const res = await fetch(`${server!.url}/v1/api-keys`, { headers: { "x-api-key": key! } });
    expect(res.status).toBe(200);
  });

  it("without DATABASE_URL, names that one variable and nothing it does not use", async () => {
    const failure = await createClient({}).then(
      () => expect.fail("client:create succeeded without a database"),
      (err: { code: number; stderr: string }) => err,
    );
    expect(failure.code).toBe(1);
    expect(failure.stderr).toContain("DATABASE_URL: required in production");
    expect(failure.stderr).not.toMatch(/SMTP_URL|JWT_SECRET|ENCRYPTION_KEY|METRICS_TOKEN/);
  });
});
