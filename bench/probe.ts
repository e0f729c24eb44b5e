import { fileURLToPath } from "node:url";
import type { Started } from "./processes.js";

/** Node arguments that load bench/process-probe.mjs into a started server (and let it collect garbage on demand). */
export const PROBED = ["--expose-gc", "--import", fileURLToPath(new URL("./process-probe.mjs", import.meta.url))];

/** `cpu` after the probe's garbage collection, `cpuBeforeGc` before it. */
export type Probe = { memory: NodeJS.MemoryUsage; cpu: NodeJS.CpuUsage; cpuBeforeGc: NodeJS.CpuUsage };

/** The server's memory (after garbage collection) and CPU time so far, from its probe. */
export function probe(app: Started): Promise<Probe> {
  const reply = new Promise<Probe>((resolve) => {
    const onLine = (line: string) => {
      if (!line.startsWith('{"probe"')) return;
      app.lines.off("line", onLine);
      resolve((JSON.parse(line) as { probe: Probe }).probe);
    };
    app.lines.on("line", onLine);
  });
  app.process.kill("SIGUSR2");
  return reply;
}

/** Milliseconds of CPU (user + system) between two probes, without their own garbage collections. */
export const cpuMsBetween = (before: Probe, after: Probe) => (after.cpuBeforeGc.user + after.cpuBeforeGc.system - before.cpu.user - before.cpu.system) / 1000;
