import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";

/**
 * `src/main.ts` as a process in a process group of its own, for tests that kill it with SIGKILL: the
 * whole group goes (its workers too, with WEB_CONCURRENCY), as when a machine dies. Every stdout line
 * is kept in `lines` (the JSON log), for tests that look for what an instance said.
 */
export type Instance = { child: ChildProcess; url: string; lines: string[]; exited: Promise<void> };

/** Resolves when every worker has logged "server started" (`env` must have LOG_LEVEL info or lower). */
export function startInstance(env: Record<string, string>): Promise<Instance> {
  const workers = Number(env.WEB_CONCURRENCY ?? 1);
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], { cwd: join(import.meta.dirname, "../.."), env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  const killOnExit = () => killGroup(child);
  process.once("exit", killOnExit);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  void exited.then(() => process.off("exit", killOnExit));
  const lines: string[] = [];
  let started = 0;
  return new Promise((resolve, reject) => {
    let stderr = "";
    child.stderr!.on("data", (chunk) => (stderr += chunk));
    createInterface({ input: child.stdout! }).on("line", (line) => {
      lines.push(line);
      if (line.includes('"server started"') && ++started === workers) resolve({ child, url: JSON.parse(line).url, lines, exited });
    });
    child.once("exit", (code, signal) => reject(new Error(`server exited (${code ?? signal}) before starting:\n${stderr}`)));
  });
}

/** SIGKILL to the instance's whole process group; resolves once its main process is gone. */
export async function killInstance(instance: Instance): Promise<void> {
  killGroup(instance.child);
  await instance.exited;
}

function killGroup(child: ChildProcess) {
  try {
    process.kill(-child.pid!, "SIGKILL");
  } catch {
    // already gone
  }
}
