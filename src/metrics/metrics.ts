import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import { createChainMetrics, type ChainMetrics } from "./chain.js";

/**
 * The business counters, incremented by the services where the event happens. Each app has its own
 * registry: one process may run several apps (the tests do), and the global one would refuse the
 * second registration of a name.
 */
export type BusinessMetrics = {
  /** Deposits that changed status, counted once their transaction has committed. */
  deposits: Counter<"status">;
  /** Withdrawals initiated (PENDING) and closed (COMPLETED, FAILED), counted after the commit. */
  withdrawals: Counter<"type" | "status">;
  /** Ledger journals written; counted as they are written, inside their transaction. */
  journals: Counter<"type">;
  /** Signed provider webhook deliveries received: applied, duplicate, or changing nothing. */
  providerWebhooks: Counter<"provider" | "outcome">;
  /** The live networks: head, synced block, lag, deposits seen and credited (src/metrics/chain.ts). */
  chain: ChainMetrics;
};

export type Metrics = BusinessMetrics & {
  registry: Registry;
  httpRequests: Counter<"method" | "route" | "status">;
  httpDuration: Histogram<"method" | "route" | "status">;
  websocketConnections: Gauge;
  /** Rate-limit calls the shared store (the supervisor, Redis) did not answer, counted in the process's own memory instead. */
  rateLimiterFallbacks: Counter<"budget">;
};

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  return {
    registry,
    httpRequests: new Counter({
      name: "http_requests_total",
      help: "HTTP requests answered, by method, route pattern and status",
      labelNames: ["method", "route", "status"],
      registers,
    }),
    httpDuration: new Histogram({
      name: "http_request_duration_seconds",
      help: "Time to answer an HTTP request, by method, route pattern and status",
      labelNames: ["method", "route", "status"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    websocketConnections: new Gauge({ name: "websocket_connections", help: "Open websocket connections (graphql-ws)", registers }),
    rateLimiterFallbacks: new Counter({
      name: "rate_limiter_fallbacks_total",
      help: "Rate-limit calls the shared store (the supervisor of the workers, Redis) did not answer, counted in this process's memory instead, by budget",
      labelNames: ["budget"],
      registers,
    }),
    deposits: new Counter({ name: "fintech_deposits_total", help: "Deposit status changes, by new status", labelNames: ["status"], registers }),
    withdrawals: new Counter({
      name: "fintech_withdrawals_total",
      help: "Withdrawals initiated (PENDING) and closed (COMPLETED, FAILED), by type",
      labelNames: ["type", "status"],
      registers,
    }),
    journals: new Counter({
      name: "fintech_ledger_journals_total",
      help: "Ledger journals written, by type (counted inside their transaction: one rolled back later still counts)",
      labelNames: ["type"],
      registers,
    }),
    providerWebhooks: new Counter({
      name: "fintech_provider_webhooks_total",
      help: "Signed provider webhook deliveries, by provider and outcome (applied, duplicate, unchanged)",
      labelNames: ["provider", "outcome"],
      registers,
    }),
    chain: createChainMetrics(registry),
  };
}
