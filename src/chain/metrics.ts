import { Counter, Gauge, type Registry } from "prom-client";

/** What an operator watches of the live networks (set by the instance that holds each network's lease). */
export type ChainMetrics = ReturnType<typeof createChainMetrics>;

export function createChainMetrics(registry: Registry) {
  const registers = [registry];
  const labelNames = ["network"] as const;
  return {
    head: new Gauge({ name: "chain_head_block", help: "The newest block the network's RPC reported", labelNames, registers }),
    synced: new Gauge({ name: "chain_synced_block", help: "The last block the watcher finished (deposits recorded up to it)", labelNames, registers }),
    lag: new Gauge({ name: "chain_lag_blocks", help: "Head minus synced block: how far the watcher is behind", labelNames, registers }),
    rpcUp: new Gauge({ name: "chain_rpc_up", help: "1 when the watcher's last pass reached the RPC, 0 while it fails (the network lags)", labelNames, registers }),
    errors: new Counter({ name: "chain_watcher_errors_total", help: "Watcher passes that failed (RPC unreachable, time-out, database)", labelNames, registers }),
    logs: new Counter({ name: "chain_transfer_logs_total", help: "Transfer logs of the configured tokens read", labelNames, registers }),
    depositsSeen: new Counter({ name: "chain_deposits_seen_total", help: "Transfers to custodial addresses recorded as PENDING deposits", labelNames, registers }),
    depositsCredited: new Counter({ name: "chain_deposits_credited_total", help: "Chain deposits completed and credited at the confirmation depth", labelNames, registers }),
    depositsFailed: new Counter({ name: "chain_deposits_failed_total", help: "Chain deposits failed: their block left the canonical chain and the transfer did not come back", labelNames, registers }),
    databaseCalls: new Counter({ name: "chain_database_calls_total", help: "Database round trips of the watcher (statements, and BEGIN and COMMIT of its transactions)", labelNames, registers }),
    reorgs: new Counter({ name: "chain_reorgs_total", help: "Reorgs seen: the watcher went back to a common ancestor", labelNames, registers }),
  };
}
