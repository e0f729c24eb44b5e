import cluster, { type Worker } from "node:cluster";
import type { Logger } from "./logger.js";

/**
 * WEB_CONCURRENCY > 1: this process only supervises. It starts that many workers, each a whole
 * instance of the API (src/main.ts), which share the port through node:cluster; everything that
 * holds across instances (the event bus, SKIP LOCKED delivery, the migration lock, revocation
 * within 1 s, exactly-once provider webhooks) holds across workers for the same reason: they meet
 * only in PostgreSQL (and Redis). A worker that dies is replaced; one that dies before it ever
 * listened stops the whole server (a bad start would only repeat). SIGTERM or SIGINT is passed to
 * every worker, which drains as a single process does, and the supervisor exits when all have.
 */
export function superviseWorkers(count: number, logger: Logger) {
  let stopping = false;
  let exitCode = 0;
  const listened = new WeakSet<Worker>();
  logger.info({ workers: count }, "starting workers");
  for (let i = 0; i < count; i++) cluster.fork();
  cluster.on("listening", (worker) => listened.add(worker));
  cluster.on("exit", (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(exitCode);
      return;
    }
    if (!listened.has(worker)) {
      logger.error({ pid: worker.process.pid, code, signal }, "a worker failed to start; stopping");
      exitCode = 1;
      return shutdown("SIGTERM");
    }
    logger.error({ pid: worker.process.pid, code, signal }, "a worker exited; starting another");
    cluster.fork();
  });
  function shutdown(signal: NodeJS.Signals) {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    const workers = Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => !!worker);
    if (workers.length === 0) process.exit(exitCode);
    for (const worker of workers) worker.process.kill(signal);
  }
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGINT", () => shutdown("SIGINT"));
}
