import { createHash, timingSafeEqual } from "node:crypto";
import type { Server } from "node:http";
import type { Request, RequestHandler, Response } from "express";
import { Gauge } from "prom-client";
import type pg from "pg";
import type { Logger } from "../logger.js";
import { clusterMetricsOf } from "./cluster.js";
import type { Metrics } from "./metrics.js";

/**
 * GET /metrics in Prometheus text format, for the whole server (every worker's, summed, when there
 * are workers); with a token configured, only for `Authorization: Bearer <token>`.
 */
export function metricsEndpoint(metrics: Metrics, token: string | undefined, logger: Logger): RequestHandler {
  const read = clusterMetricsOf(metrics.registry) ?? (() => metrics.registry.metrics());
  return async (req: Request, res: Response) => {
    if (token !== undefined && !sameSecret(bearerToken(req), token)) {
      res.setHeader("WWW-Authenticate", 'Bearer realm="metrics"');
      res.status(401).json({ error: "A valid bearer token is required" });
      return;
    }
    let text: string;
    try {
      text = await read();
    } catch (err) {
      logger.warn({ err }, "could not collect the workers' metrics");
      res.status(503).json({ error: "Metrics are unavailable; retry shortly" });
      return;
    }
    res.type(metrics.registry.contentType).send(text);
  };
}

const bearerToken = (req: Request) => /^Bearer (.+)$/.exec(req.get("authorization") ?? "")?.[1] ?? "";

/** Compared as digests: equal lengths for timingSafeEqual, and no timing difference by length. */
function sameSecret(given: string, expected: string): boolean {
  const digest = (value: string) => createHash("sha256").update(value).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** Websocket connections (every upgrade on this server is graphql-ws) and, on PostgreSQL, the pool's use. */
export function observeServer(metrics: Metrics, httpServer: Server, pool: pg.Pool | undefined) {
  httpServer.on("upgrade", (_req, socket) => {
    metrics.websocketConnections.inc();
    socket.once("close", () => metrics.websocketConnections.dec());
  });
  if (!pool) return;
  const poolGauge = (name: string, help: string, read: () => number) =>
    new Gauge({
      name,
      help,
      registers: [metrics.registry],
      collect() {
        this.set(read());
      },
    });
  poolGauge("db_pool_connections", "PostgreSQL connections open in the pool", () => pool.totalCount);
  poolGauge("db_pool_idle_connections", "PostgreSQL connections idle in the pool", () => pool.idleCount);
  poolGauge("db_pool_waiting_requests", "Queries waiting for a pool connection", () => pool.waitingCount);
}
