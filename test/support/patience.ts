import { availableParallelism, loadavg } from "node:os";

// How much longer than on an idle machine the tests wait for something before they call it lost.
// Waits end on the event itself (a process's "server started" line, its exit, a row, a message);
// only their outer bounds are timers, and those depend on the machine's speed: a bound met on an idle
// machine is missed at a load average of 11 on 2 cores. Every such bound goes through `patient`.
//
// The factor is TEST_PATIENCE when set (a number ≥ 1), else the 1-minute load average per core, at
// least 1, read when the bound is taken (a run's load changes as it goes).

/** The factor bounds are multiplied by now: TEST_PATIENCE, or the load per core, never below 1. */
export function patience(): number {
  const configured = process.env.TEST_PATIENCE;
  if (configured) {
    const factor = Number(configured);
    if (!(factor >= 1)) throw new Error(`TEST_PATIENCE must be a number of at least 1 (got ${JSON.stringify(configured)})`);
    return factor;
  }
  return Math.max(1, loadavg()[0]! / availableParallelism());
}

/** `ms`, an idle machine's bound, stretched by the machine's load (see `patience`). */
export const patient = (ms: number): number => Math.ceil(ms * patience());

/** A test's and a hook's bound on an idle machine (vitest.config.ts; stretched per file by test/support/patience-setup.ts). */
export const TEST_TIMEOUT_MS = 30_000;
export const HOOK_TIMEOUT_MS = 60_000;
