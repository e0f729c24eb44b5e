import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { patient } from "./patience.js";

export type ServerProcess = { url: string; output: string[]; stop(): Promise<void> };

/** Secrets every instance of one deployment shares (instances differ only in DATA_DIR and port). */
export const SHARED_SECRETS = {
  JWT_SECRET: "multi-instance-test-jwt-secret-0123456789abcdef",
  ENCRYPTION_KEY: "a".repeat(64),
  WEBHOOK_SECRET: "multi-instance-test-webhook-secret-0123456789",
};

/**
 * `src/main.ts` as its own process, as production runs it; resolves once it logs "server started"
 * (once per worker, with WEB_CONCURRENCY).
 */
export async function startServerProcess(env: Record<string, string>): Promise<ServerProcess> {
  const instances = Number(env.WEB_CONCURRENCY ?? 1);
  let started = 0;
  const dataDir = mkdtempSync(join(tmpdir(), "fintech-instance-"));
  const stop = async () => {
    await stopProcess(child);
    rmSync(dataDir, { recursive: true, force: true });
  };
  const child = spawn(join(process.cwd(), "node_modules/.bin/tsx"), ["src/main.ts"], {
    cwd: process.cwd(),
    env: {
      PATH: process.env.PATH,
      NODE_ENV: "test",
      PORT: "0",
      HOST: "127.0.0.1",
      DATA_DIR: dataDir,
      LOG_LEVEL: "info",
      SANDBOX_SETTLE_MS: "600000",
      RATE_LIMIT_PER_MINUTE: "100000",
      // Test files share one database: only those about webhooks run a delivery worker.
      WEBHOOK_DELIVERY: "off",
      RETENTION: "off",
      ...SHARED_SECRETS,
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  child.stderr!.on("data", (chunk) => output.push(String(chunk)));
  const url = await new Promise<string>((resolve, reject) => {
    // The start ends with its "server started" line or the process's exit; this bound only catches a hang.
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output.join("")}`)), patient(120_000));
    child.once("exit", (code) => reject(new Error(`server exited (${code}):\n${output.join("")}`)));
    createInterface({ input: child.stdout! }).on("line", (line) => {
      output.push(line);
      const entry = parseJson(line);
      if (entry?.msg === "server started" && ++started === instances) {
        clearTimeout(timer);
        resolve(entry.url as string);
      }
    });
  }).catch(async (err) => {
    await stop();
    throw err;
  });
  return { url, output, stop };
}

function parseJson(line: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}
