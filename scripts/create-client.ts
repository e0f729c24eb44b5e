// npm run client:create -- --email ops@example.com [--name "Acme"]
// Creates (or finds) a client and prints one new API key. Uses the same database settings as the server.
import { parseArgs } from "node:util";
import { loadConfig } from "../src/config.js";
import { embeddedDataDir, openDatabase } from "../src/db/database.js";
import { createClientWithKey } from "../src/clients/service.js";
import { ApiKeyService } from "../src/keys/service.js";
import { createLogger } from "../src/logger.js";

const { values } = parseArgs({ options: { email: { type: "string" }, name: { type: "string" } } });
if (!values.email) {
  process.stderr.write("usage: npm run client:create -- --email you@example.com [--name \"Acme\"]\n");
  process.exit(2);
}
const config = loadConfig();
const db = await openDatabase({ url: config.databaseUrl, embeddedDir: embeddedDataDir(config.dataDir), logger: createLogger("warn") });
try {
  const { client, apiKey } = await createClientWithKey(db.prisma, new ApiKeyService(db.prisma), { email: values.email, name: values.name });
  process.stdout.write(`client  ${client.id} <${client.email}>\napi key ${apiKey.key}\n(shown once; send it as the x-api-key header)\n`);
} finally {
  await db.close();
}
