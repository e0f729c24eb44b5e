// npm run client:create -- --email ops@example.com [--name "Acme"] [--mode test|live]
// Creates (or finds) a client and prints one new API key of the mode asked (default: live with
// NODE_ENV=production, test elsewhere). Reads only the server's database settings
// (DATABASE_URL, DATA_DIR, NODE_ENV): it sends no mail and signs nothing.
// On the embedded database, while a server holds the data directory, the server does it (admin socket).
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { createClientThroughServer } from "../src/admin/client.js";
import { adminSocketPath, type CreatedClient } from "../src/admin/protocol.js";
import { defaultMode, isMode, type Mode } from "../src/modes.js";
import { createClientWithKey } from "../src/keys/first-key.js";
import { loadDatabaseConfig, type DatabaseConfig } from "../src/config.js";
import { embeddedDataDir, openDatabase } from "../src/db/database.js";
import { DataDirBusyError } from "../src/db/embedded-lock.js";
import { ApiKeyService } from "../src/keys/service.js";
import { createLogger } from "../src/logger.js";

/** A server that has just taken the data directory opens its admin socket once its database is ready. */
const SERVER_STARTUP_WAIT_MS = 30_000;

type NewClient = { email: string; name?: string; mode: Mode };

async function createInDatabase(config: DatabaseConfig, input: NewClient): Promise<CreatedClient> {
  const db = await openDatabase({ url: config.databaseUrl, embeddedDir: embeddedDataDir(config.dataDir), role: "tool", logger: createLogger("warn") });
  try {
    return await createClientWithKey(db.prisma, new ApiKeyService(db.prisma), input);
  } finally {
    await db.close();
  }
}

async function createThroughServer(dataDir: string, input: NewClient): Promise<CreatedClient> {
  const deadline = Date.now() + SERVER_STARTUP_WAIT_MS;
  for (;;) {
    try {
      return await createClientThroughServer(dataDir, input);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ECONNREFUSED") throw err;
      if (Date.now() > deadline) throw new Error(`the server holding ${dataDir} does not answer on ${adminSocketPath(dataDir)} (see its log); stop it and run this again`);
      await sleep(250);
    }
  }
}

async function main() {
  const { values } = parseArgs({ options: { email: { type: "string" }, name: { type: "string" }, mode: { type: "string" } } });
  if (!values.email || (values.mode !== undefined && !isMode(values.mode))) {
    process.stderr.write("usage: npm run client:create -- --email you@example.com [--name \"Acme\"] [--mode test|live]\n");
    process.exit(2);
  }
  const input = { email: values.email, name: values.name, mode: values.mode ?? defaultMode(process.env.NODE_ENV === "production") };
  const config = loadDatabaseConfig();
  let created: CreatedClient;
  try {
    created = await createInDatabase(config, input);
  } catch (err) {
    if (!(err instanceof DataDirBusyError) || err.holder?.role !== "server") throw err;
    created = await createThroughServer(config.dataDir, input);
  }
  const { client, apiKey } = created;
  process.stdout.write(`client  ${client.id} <${client.email}>\napi key ${apiKey.key} (${input.mode} mode)\n(shown once; send it as the x-api-key header)\n`);
}

main().catch((err) => {
  process.stderr.write(`client:create failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
