import { randomBytes } from "node:crypto";
import { HDKey } from "@scure/bip32";
import { startProcess, type Started } from "./processes.js";

const secret = () => randomBytes(32).toString("hex");

/** The API as deployed (production mode, its own process) on the bench database; `env` adds to it; `cwd`: another checkout's. */
export function startApp(databaseUrl: string, env: Record<string, string> = {}, nodeArgs: string[] = [], cwd?: string): Promise<Started> {
  return startProcess("src/main.ts", {
    NODE_ENV: "production",
    DATABASE_URL: databaseUrl,
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "info", // the "server started" line carries the URL
    JWT_SECRET: secret(),
    ENCRYPTION_KEY: secret(),
    WEBHOOK_SECRET: secret(),
    CUSTODIAN_MASTER_KEY: HDKey.fromMasterSeed(randomBytes(64)).privateExtendedKey,
    SMTP_URL: "smtp://127.0.0.1:25", // required in production; the bench sends no mail
    RATE_LIMIT_PER_MINUTE: "100000000",
    METRICS_TOKEN: secret(),
    // One process unless a part asks for workers (production's default is one per core).
    WEB_CONCURRENCY: "1",
    ...env,
  }, nodeArgs, cwd);
}
