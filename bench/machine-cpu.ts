import { cpus } from "node:os";

export const CORES = cpus().length;

/**
 * Milliseconds of CPU the whole machine has been busy so far, summed over its cores: every process
 * (the server, PostgreSQL, this bench), not just the one measured. Not in it: time stolen by the
 * hypervisor, and softirq time, which os.cpus() leaves out (about 3% of the busy time in a deposit
 * run here), so the floor below errs low.
 */
export function machineBusyMs(): number {
  return cpus().reduce((sum, { times }) => sum + times.user + times.nice + times.sys + times.irq, 0);
}

/**
 * What the machine's CPU alone allows for a closed loop of `inFlight` operations that cost `msEach` of
 * machine CPU: at most cores / msEach operations per millisecond, so by Little's law each waits at
 * least inFlight × msEach / cores milliseconds on average.
 */
export const closedLoopFloorMs = (inFlight: number, msEach: number) => (inFlight * msEach) / CORES;
