import type { Mode } from "../modes.js";
import type { Sql } from "../db/sql.js";
import type { Logger } from "../logger.js";
import type { ChainMetrics } from "../metrics/chain.js";
import { NotReconciled, reconcile, type ReconciledNetwork, type TokenReconciliation } from "./reconciliation.js";

/**
 * One mode's continuous reconciliation: run from the sender pass of the mode's first on-chain network
 * (by its holder of the sender lease, so once across instances), at most every CHAIN_RECONCILE_INTERVAL_MS.
 * Sets the gauges of every token; a shortfall is an error line once, when it appears, and an info line
 * when it is resolved; the gauge shows it in between.
 */
export class Reconciler {
  private lastRun = Number.NEGATIVE_INFINITY;
  private readonly short = new Set<string>();
  private unreadable = false;

  constructor(
    private readonly deps: { sql: Sql; mode: Mode; networks: ReconciledNetwork[]; intervalMs: number; metrics: ChainMetrics; logger: Logger },
  ) {}

  /** Reconciles if the interval has passed since the last run. */
  async maybeRun(): Promise<void> {
    if (Date.now() - this.lastRun < this.deps.intervalMs) return;
    this.lastRun = Date.now();
    const { mode, metrics, logger } = this.deps;
    let report: TokenReconciliation[];
    try {
      report = await reconcile(this.deps.sql, mode, this.deps.networks);
    } catch (err) {
      // Not now (a watcher behind a reorg, an RPC down): the gauges keep the last reading, the next pass tries again.
      if (!this.unreadable) logger.warn({ mode, err: err instanceof NotReconciled ? err.message : String(err) }, "chain reconciliation not possible now; retrying");
      this.unreadable = true;
      return;
    }
    this.unreadable = false;
    for (const books of report) {
      const labels = { mode, token: books.token };
      metrics.reconciliationOnChain.set(labels, Number(books.onChain));
      metrics.reconciliationLiabilities.set(labels, Number(books.liabilities));
      metrics.reconciliationDifference.set(labels, Number(books.difference));
      const key = `${mode}:${books.token}`;
      const shortfall = books.difference.startsWith("-");
      if (shortfall && !this.short.has(key)) {
        this.short.add(key);
        logger.error(books, "chain reconciliation: shortfall, the chains hold less than the platform owes");
      } else if (!shortfall && this.short.delete(key)) {
        logger.info(books, "chain reconciliation: the shortfall is resolved");
      }
    }
  }
}
