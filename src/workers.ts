import cluster, { type Worker } from "node:cluster";
import { RateLimiterClusterMaster } from "rate-limiter-flexible";
import type { Logger } from "./logger.js";
import { aggregateWorkerMetrics } from "./metrics/cluster.js";

/** Deaths counted over this window decide the wait before the next start, and when to give up. */
const DEATH_WINDOW_MS = 60_000;
/** More deaths than this within the window stop the server: it is failing, not flaking. */
const MAX_DEATHS_IN_WINDOW = 10;
/** The wait before replacing a worker doubles with each recent death, up to this. */
const MAX_RESTART_DELAY_MS = 30_000;
/** Workers still running this long after SIGTERM are killed. */
const SHUTDOWN_GRACE_MS = 30_000;

/**
 * WEB_CONCURRENCY > 1: this process only supervises. It starts that many workers, each a whole
 * instance of the API (src/main.ts), which share the port through node:cluster; everything that
 * holds across instances (the event bus, SKIP LOCKED delivery, the migration lock, revocation
 * within 1 s, exactly-once provider webhooks) holds across workers for the same reason: they meet
 * only in PostgreSQL (and Redis). The in-memory rate limits are kept here, for all the workers
 * (rate-limiter-flexible's cluster master), so N workers do not give a caller N budgets, and so is
 * /metrics's answer: every worker's metrics summed (src/metrics/cluster.ts), whichever worker is scraped.
 *
 * A worker that dies is replaced after a wait that doubles with each death in the last minute (1 s,
 * 2 s, … 30 s); more than ten deaths in a minute stop the server, and so does a worker of the first
 * start that dies before it ever listened (a bad start would only repeat). SIGTERM or SIGINT is
 * passed to every worker, which drains as a single process does; any still running 30 s later is
 * killed, and the supervisor exits when all are gone.
 */
export function superviseWorkers(count: number, logger: Logger) {
  let stopping = false;
  let exitCode = 0;
  const deaths: number[] = [];
  const firstStart = new Set<Worker>();
  const listened = new WeakSet<Worker>();
  new RateLimiterClusterMaster();
  aggregateWorkerMetrics();
  logger.info({ workers: count }, "starting workers");
  for (let i = 0; i < count; i++) firstStart.add(cluster.fork());
  cluster.on("listening", (worker) => listened.add(worker));
  cluster.on("exit", (worker, code, signal) => {
    const live = () => Object.keys(cluster.workers ?? {}).length;
    if (stopping) {
      if (live() === 0) process.exit(exitCode);
      return;
    }
    const now = Date.now();
    deaths.push(now);
    while (deaths[0] < now - DEATH_WINDOW_MS) deaths.shift();
    const failedFirstStart = firstStart.has(worker) && !listened.has(worker);
    if (failedFirstStart || deaths.length > MAX_DEATHS_IN_WINDOW) {
      logger.error({ pid: worker.process.pid, code, signal, deathsInLastMinute: deaths.length }, failedFirstStart ? "a worker failed to start; stopping" : "workers keep dying; stopping");
      exitCode = 1;
      return shutdown("SIGTERM");
    }
    const delay = Math.min(MAX_RESTART_DELAY_MS, 1000 * 2 ** (deaths.length - 1));
    logger.error({ pid: worker.process.pid, code, signal, restartInMs: delay }, "a worker exited; starting another");
    setTimeout(() => stopping || cluster.fork(), delay);
  });

  function shutdown(signal: NodeJS.Signals) {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    const workers = Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => !!worker);
    if (workers.length === 0) process.exit(exitCode);
    for (const worker of workers) worker.process.kill(signal);
    setTimeout(() => {
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill("SIGKILL");
    }, SHUTDOWN_GRACE_MS).unref();
  }
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGINT", () => shutdown("SIGINT"));
}
