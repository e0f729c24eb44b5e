import { spawn, type ChildProcess } from "node:child_process";
import { createInterface, type Interface } from "node:readline";

export type Started = {
  url: string;
  process: ChildProcess;
  /** The process's stdout, line by line, after the start line. */
  lines: Interface;
  stop(): Promise<void>;
};

const START_TIMEOUT_MS = 180_000;

/** BENCH_CPU_PROFILE_DIR: every started process writes a V8 CPU profile there when it exits (`node --cpu-prof`). */
const profiling = (dir = process.env.BENCH_CPU_PROFILE_DIR) => (dir ? ["--cpu-prof", `--cpu-prof-dir=${dir}`] : []);

/**
 * Starts an entry point as its own process and waits for the JSON line that carries its `url`: a
 * TypeScript one through tsx, a compiled one (`.js`) with plain node, as production runs it. `cwd`:
 * the checkout to run it from (another one must have its own node_modules).
 */
export function startProcess(entry: string, env: Record<string, string>, nodeArgs: string[] = [], cwd?: string): Promise<Started> {
  const loader = entry.endsWith(".ts") ? ["--import", "tsx"] : [];
  const child = spawn(process.execPath, [...profiling(), ...loader, ...nodeArgs, entry], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    // 3 minutes: on a shared 2-core machine under load a server took more than one to start.
    const timer = setTimeout(() => {
      child.kill("SIGTERM"); // not left running, serving nobody
      reject(new Error(`${entry} did not start in ${START_TIMEOUT_MS / 1000} s`));
    }, START_TIMEOUT_MS);
    child.once("exit", (code) => reject(new Error(`${entry} exited with ${code}`)));
    // Only until the start line: the bench must not spend its own CPU parsing the server's access log.
    const onLine = (line: string) => {
      try {
        const { url } = JSON.parse(line) as { url?: string };
        if (!url) return;
        lines.off("line", onLine);
        clearTimeout(timer);
        resolve({
          url: url.replace("localhost", "127.0.0.1"),
          process: child,
          lines,
          stop: () =>
            new Promise((done) => {
              child.once("exit", () => done());
              child.kill("SIGTERM");
            }),
        });
      } catch {
        // not a JSON log line
      }
    };
    lines.on("line", onLine);
  });
}
