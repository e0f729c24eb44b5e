import { Writable } from "node:stream";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildApp, type App, type AppOptions } from "../../src/app.js";
import { createClientWithKey } from "../../src/keys/first-key.js";
import { loadConfig } from "../../src/config.js";
import { createLogger } from "../../src/logger.js";
import { embeddedSnapshot } from "./embedded-snapshot.js";
import { testDatabaseUrl } from "./test-database.js";

export { testDatabaseUrl };

export type TestServer = {
  app: App;
  url: string;
  /** Every log line the server wrote, as text (for checks that secrets never reach it). */
  logs: string[];
  stop(): Promise<void>;
};

/** A real server on a free loopback port, over its own in-memory database unless PostgreSQL is configured. */
export async function startServer(
  options: { env?: Record<string, string>; providers?: AppOptions["providers"]; webhookTimeoutMs?: number; resolveHost?: AppOptions["resolveHost"] } = {},
): Promise<TestServer> {
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logs.push(chunk.toString());
      done();
    },
  });
  const dataDir = mkdtempSync(join(tmpdir(), "fintech-test-"));
  const config = loadConfig({
    NODE_ENV: "test",
    PORT: "0",
    HOST: "127.0.0.1",
    DATA_DIR: dataDir,
    LOG_LEVEL: "info",
    RATE_LIMIT_PER_MINUTE: "100000",
    SIGN_IN_RATE_LIMIT_PER_MINUTE: "100000",
    AUTH_FAILURE_RATE_LIMIT_PER_MINUTE: "100000",
    SANDBOX_SETTLE_MS: "600000",
    // Test files share one database: only those about webhooks run a delivery worker (WEBHOOK_DELIVERY: "on").
    WEBHOOK_DELIVERY: "off",
    // Nor a retention job: a test that needs one runs it itself (test/retention.test.ts).
    RETENTION: "off",
    // Nor the card authorization expiry: any instance's run expires every due authorization of the database.
    CARD_AUTHORIZATION_EXPIRY: "off",
    ...(testDatabaseUrl ? { DATABASE_URL: testDatabaseUrl } : {}),
    ...options.env,
  });
  const app = await buildApp({ config, logger: createLogger(config.logLevel, sink), embeddedDir: "memory://", embeddedSnapshot: await embeddedSnapshot(), providers: options.providers,
    webhookTimeoutMs: options.webhookTimeoutMs,
    resolveHost: options.resolveHost,
  });
  const url = await app.start();
  // Its data directory (it may hold an encrypted master key) goes with it.
  const stop = async () => {
    await app.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  return { app, url, logs, stop };
}

export type Tenant = { clientId: string; apiKey: string; headers: Record<string, string> };

/** A fresh client with one API key of `mode` (test by default): each test works in its own tenant. */
export async function newTenant(server: TestServer, mode: "test" | "live" = "test"): Promise<Tenant> {
  const email = `tenant-${crypto.randomUUID()}@example.com`;
  const { client, apiKey } = await createClientWithKey(server.app.db.prisma, server.app.services.keys, { email, mode });
  return { clientId: client.id, apiKey: apiKey.key, headers: { "x-api-key": apiKey.key } };
}
