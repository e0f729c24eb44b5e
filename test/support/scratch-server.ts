import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import pg from "pg";
import { createClientWithKey } from "../../src/keys/first-key.js";
import { openDatabase } from "../../src/db/database.js";
import { ApiKeyService } from "../../src/keys/service.js";
import { createLogger } from "../../src/logger.js";
import { SHARED_SECRETS } from "./server-process.js";

/**
 * The real server on a database of its own, for runs that kill it (test/support/crash-run.ts) or
 * load it for minutes (scripts/soak.ts): a scratch PostgreSQL database, its first client, the
 * server as a process, and plain HTTP calls to it.
 */
export type ScratchDatabase = { url: string; drop(): Promise<void> };

/** A database of the run's own beside the given one, so its workers see only the run's traffic. */
export async function createScratchDatabase(baseUrl: string, prefix: string): Promise<ScratchDatabase> {
  const name = `${prefix}_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: baseUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

/** A client with one API key of `mode`, created in the database directly (migrating it first); returns the key. */
export async function createScratchClient(databaseUrl: string, mode: "test" | "live" = "test"): Promise<string> {
  const db = await openDatabase({ url: databaseUrl, logger: createLogger("warn"), poolSize: 2 });
  try {
    const { apiKey } = await createClientWithKey(db.prisma, new ApiKeyService(db.prisma), { email: `scratch-${crypto.randomUUID()}@example.com`, mode });
    return apiKey.key;
  } finally {
    await db.close();
  }
}

/** What every scratch server runs with: development mode with the sandbox, on loopback, on the scratch database. */
export const scratchServerEnv = (databaseUrl: string, dataDir: string, overrides: Record<string, string>): Record<string, string> => ({
  PATH: process.env.PATH ?? "",
  NODE_ENV: "development",
  PORT: "0",
  HOST: "127.0.0.1",
  DATA_DIR: dataDir,
  DATABASE_URL: databaseUrl,
  // "server started" is an info line.
  LOG_LEVEL: "info",
  SANDBOX: "on",
  ...SHARED_SECRETS,
  ...overrides,
});

export type ScratchServer = {
  url: string;
  child: ChildProcess;
  exited: Promise<void>;
  /** Error lines the server logged (request logs of 5xx answers aside). */
  errors: string[];
};

/**
 * `src/main.ts` as its own process (`env` must have LOG_LEVEL info or lower); resolves once it logs
 * "server started". Its error lines go to `errors` (several processes of one run may share one).
 */
export function startScratchServer(env: Record<string, string>, errors: string[] = []): Promise<ScratchServer> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], { cwd: join(import.meta.dirname, "../.."), env, stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  // A run cut short (a test's time-out) must not leave its server running.
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  void exited.then(() => process.off("exit", killOnExit));
  return new Promise((resolve, reject) => {
    let output = "";
    const onStderr = (chunk: Buffer) => (output += chunk.toString());
    child.stderr!.on("data", onStderr);
    createInterface({ input: child.stdout! }).on("line", (line) => {
      if (/"level":(50|60)/.test(line) && !line.includes('"msg":"request completed"')) errors.push(line.slice(0, 2000));
      if (!line.includes('"server started"')) return;
      child.stderr!.off("data", onStderr);
      resolve({ url: JSON.parse(line).url, child, exited, errors });
    });
    child.once("exit", (code, signal) => reject(new Error(`server exited (${code ?? signal}) before starting:\n${output}`)));
  });
}

export type Answer = { status: number; body: any; replayed: boolean };

export async function call(url: string, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
  const res = await fetch(`${url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(30_000) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, replayed: res.headers.get("idempotent-replayed") === "true" };
}
