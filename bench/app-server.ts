import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { HDKey } from "@scure/bip32";
import { startProcess, type Started } from "./processes.js";

const secret = () => randomBytes(32).toString("hex");

const built = new Set<string>();

/**
 * The production build of a checkout (`npm run build`, once per bench run): the server is measured as
 * `NODE_ENV=production npm start` runs it, plain node on the compiled files. Run through tsx instead,
 * every closure the server makes per request also calls esbuild's name-keeping helper.
 */
function build(cwd = process.cwd()) {
  if (built.has(cwd)) return;
  execFileSync("npm", ["run", "build", "--silent"], { cwd, stdio: ["ignore", "ignore", "inherit"] });
  built.add(cwd);
}

/** The API as deployed (production mode, its own process, the compiled build) on the bench database; `env` adds to it; `cwd`: another checkout's. */
export function startApp(databaseUrl: string, env: Record<string, string> = {}, nodeArgs: string[] = [], cwd?: string): Promise<Started> {
  build(cwd);
  return startProcess("dist/main.js", {
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
    // The unauthenticated row sends nothing but bad credentials from this address: without this its
    // budget would block the address, and every later row would measure 429s.
    AUTH_FAILURE_RATE_LIMIT_PER_MINUTE: "100000000",
    METRICS_TOKEN: secret(),
    // One process unless a part asks for workers (production's default is one per core).
    WEB_CONCURRENCY: "1",
    ...env,
  }, nodeArgs, cwd);
}
