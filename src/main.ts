import cluster from "node:cluster";
import { buildApp } from "./app.js";
import { firstRunApiKey, firstRunBanner } from "./first-run.js";
import { ConfigError, loadConfig, type Config } from "./config.js";
import { createLogger, prettyOutput, type Logger } from "./logger.js";
import { superviseWorkers } from "./workers.js";

async function main() {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const logger = createLogger(config.logLevel, process.stdout.isTTY ? prettyOutput() : undefined);
  if (config.webConcurrency > 1 && cluster.isPrimary) return superviseWorkers(config.webConcurrency, logger);
  await serve(config, logger);
}

/** One instance of the API, in this process (the only one, or a worker of the cluster). */
async function serve(config: Config, parentLogger: Logger) {
  // A worker's lines say which worker wrote them.
  const logger = cluster.worker ? parentLogger.child({ worker: cluster.worker.id }) : parentLogger;
  if (config.devnetSettings) logger.info({ file: config.devnetSettings }, "test chain settings read from DATA_DIR/devnet.env (npm run devnet); the environment's CHAIN_TEST_… variables win");
  const app = await buildApp({ config, logger });
  const url = await app.start();
  const sandboxKey = await firstRunApiKey(config, app.db.prisma, app.services.keys);
  if (sandboxKey) process.stdout.write(firstRunBanner(url, sandboxKey));
  const clientCount = await app.db.prisma.client.count();
  logger.info(
    { url, pid: process.pid, graphql: `${url}/graphql`, database: config.databaseUrl ? "postgresql" : `embedded (${config.dataDir})`, sandbox: config.sandbox },
    "server started",
  );
  if (clientCount === 0) {
    logger.info(
      `No client yet. Get credentials with \`npm run client:create -- --email you@example.com\` (prints an API key), ` +
        `or sign in by OTP: POST ${url}/v1/client-auth/otp then /v1/client-auth/verify` +
        (config.smtpUrl ? "" : " (SMTP_URL is unset: the code is written to this log)"),
    );
  }
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    await app.stop();
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
}

void main().catch((err) => {
  process.stderr.write(`Start-up failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
