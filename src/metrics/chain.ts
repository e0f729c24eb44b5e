import { Counter, Gauge, type GaugeConfiguration, type Registry } from "prom-client";

/** What an operator watches of the live networks (set by the instance that holds each network's lease). */
export type ChainMetrics = ReturnType<typeof createChainMetrics>;

export function createChainMetrics(registry: Registry) {
  const registers = [registry];
  const labelNames = ["network"] as const;
  /**
   * A gauge of a network's state, not of one process: under WEB_CONCURRENCY every worker has one, and
   * the cluster's scrape (src/metrics/cluster.ts) takes their highest value instead of their sum. The
   * lease holder's gauges are the only ones set (a worker not holding the lease removes its own).
   */
  const networkGauge = <T extends string>(config: Omit<GaugeConfiguration<T>, "registers" | "aggregator">) => new Gauge<T>({ ...config, registers, aggregator: "max" });
  return {
    head: networkGauge({ name: "chain_head_block", help: "The newest block the network's RPC reported", labelNames }),
    synced: networkGauge({ name: "chain_synced_block", help: "The last block the watcher finished (deposits recorded up to it)", labelNames }),
    lag: networkGauge({ name: "chain_lag_blocks", help: "Head minus synced block: how far the watcher is behind", labelNames }),
    rpcUp: networkGauge({ name: "chain_rpc_up", help: "1 when the watcher's last pass reached the RPC, 0 while it fails (the network lags); the highest of the workers", labelNames }),
    errors: new Counter({ name: "chain_watcher_errors_total", help: "Watcher passes that failed (RPC unreachable, time-out, database)", labelNames, registers }),
    logs: new Counter({ name: "chain_transfer_logs_total", help: "Transfer logs of the configured tokens read", labelNames, registers }),
    depositsSeen: new Counter({ name: "chain_deposits_seen_total", help: "Transfers to custodial addresses recorded as PENDING deposits", labelNames, registers }),
    depositsCredited: new Counter({ name: "chain_deposits_credited_total", help: "Chain deposits completed and credited at the confirmation depth", labelNames, registers }),
    depositsFailed: new Counter({ name: "chain_deposits_failed_total", help: "Chain deposits failed: their block left the canonical chain and the transfer did not come back, or the ledger refused the amount", labelNames, registers }),
    settlementErrors: new Counter({ name: "chain_deposit_settlement_errors_total", help: "Attempts to settle a due deposit that threw (it stays PENDING and is tried again; the others go on)", labelNames, registers }),
    depositsOrphaned: new Counter({ name: "chain_deposits_orphaned_total", help: "Completed deposits whose transfer left the canonical chain in a reorg deeper than the depth (flagged ORPHANED)", labelNames, registers }),
    depositsFlagged: networkGauge({ name: "chain_deposits_flagged", help: "Deposits flagged for the operator: ORPHANED (credited, transfer gone) or UNSETTLEABLE (FAILED: the ledger refused the amount)", labelNames: ["network", "flag"] }),
    databaseCalls: new Counter({ name: "chain_database_calls_total", help: "Database round trips of the watcher (statements, and BEGIN and COMMIT of its transactions)", labelNames, registers }),
    reorgs: new Counter({ name: "chain_reorgs_total", help: "Reorgs seen: the watcher went back to a common ancestor", labelNames, registers }),
    deepReorgs: new Counter({ name: "chain_deep_reorgs_total", help: "Reorgs at least as deep as the confirmation depth (logged as errors)", labelNames, registers }),
    // The sender (withdrawals, forwards, sweeps and their gas) and the treasury.
    senderErrors: new Counter({ name: "chain_sender_errors_total", help: "Sender passes or broadcasts that failed (RPC unreachable, refused, database)", labelNames, registers }),
    sendsBroadcast: new Counter({ name: "chain_sends_broadcast_total", help: "Transactions broadcast (first sends, rebroadcasts and replacements)", labelNames: ["network", "purpose"], registers }),
    sendsReplaced: new Counter({ name: "chain_sends_replaced_total", help: "Sends not mined in time, replaced at their nonce with higher fees", labelNames, registers }),
    sendsDropped: new Counter({ name: "chain_sends_dropped_total", help: "Mined sends whose block left the canonical chain (broadcast again)", labelNames, registers }),
    sendsReorged: new Counter({
      name: "chain_sends_reorged_total",
      help: "Confirmed sends a reorg deeper than the confirmation depth took off the chain (sent again as signed)",
      labelNames,
      registers,
    }),
    sendsOrphaned: new Counter({ name: "chain_sends_orphaned_total", help: "Sends whose nonce a transaction the platform did not sign took: flagged ORPHANED", labelNames, registers }),
    feeCeilingReached: new Counter({
      name: "chain_sends_fee_ceiling_total",
      help: "Sends whose next replacement would bid above the network's fee ceiling (CHAIN_MAX_FEE_GWEI_<NETWORK>): not signed, the send waits",
      labelNames,
      registers,
    }),
    senderPasses: new Counter({ name: "chain_sender_passes_total", help: "Sender passes of this process, leading (it holds the sender lease) or not", labelNames: ["network", "leading"], registers }),
    reorgedSends: new Gauge({ name: "chain_sends_reorged", help: "Sends taken off the chain after their confirmation by a deep reorg, not yet confirmed again", labelNames, registers }),
    orphanedSends: new Gauge({ name: "chain_sends_orphaned", help: "ORPHANED sends waiting for the operator", labelNames, registers }),
    sendsConfirmed: new Counter({ name: "chain_sends_confirmed_total", help: "Sends mined and at the confirmation depth", labelNames: ["network", "purpose"], registers }),
    sendsFailed: new Counter({ name: "chain_sends_failed_total", help: "Sends failed: the token refused the transfer, or it reverted on chain", labelNames: ["network", "purpose"], registers }),
    sendsWaiting: networkGauge({ name: "chain_sends_waiting", help: "Queued sends waiting because their sending address lacks TOKENS or GAS", labelNames: ["network", "reason"] }),
    sendsPending: networkGauge({ name: "chain_sends_pending", help: "Sends not yet confirmed or failed", labelNames }),
    oldestPendingSeconds: networkGauge({ name: "chain_sends_oldest_pending_seconds", help: "Age of the oldest send not yet confirmed or failed (0 when none)", labelNames }),
    unsweptDeposits: networkGauge({ name: "chain_unswept_deposits", help: "Completed deposits whose tokens are not yet swept into the treasury", labelNames }),
    treasuryNative: networkGauge({ name: "chain_treasury_native_balance", help: "The treasury's native coin balance, in whole coins (it pays every send's gas)", labelNames }),
    // Set by every instance (each checks the tokens itself); the cluster's scrape takes the lowest of the workers.
    tokenAvailable: new Gauge({
      name: "chain_token_available",
      help: "1 when a configured token works on its chain (code at its address, decimals() answers), 0 while it does not (its deposits are not watched; re-checked every pass)",
      labelNames: ["network", "token", "mode"],
      registers,
      aggregator: "min",
    }),
    treasuryToken: networkGauge({ name: "chain_treasury_token_balance", help: "The treasury's token balances, in whole tokens", labelNames: ["network", "token"] }),
    // Reconciliation, per mode and token over the mode's networks on a chain (docs/chain.md), in whole tokens.
    reconciliationOnChain: networkGauge({ name: "chain_reconciliation_on_chain", help: "What the mode's treasuries and deposit addresses hold of the token, in whole tokens", labelNames: ["mode", "token"] }),
    reconciliationLiabilities: networkGauge({
      name: "chain_reconciliation_liabilities",
      help: "What the platform owes in the token: users' balances, client revenue, withdrawals and forwards not yet on the chain; in whole tokens",
      labelNames: ["mode", "token"],
    }),
    reconciliationDifference: networkGauge({
      name: "chain_reconciliation_difference",
      help: "On chain minus liabilities, in whole tokens: below 0 is a shortfall (the books are short), above 0 a surplus",
      labelNames: ["mode", "token"],
    }),
  };
}
