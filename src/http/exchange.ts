import type { IncomingMessage, ServerResponse } from "node:http";
import type { NextFunction } from "express";
import type { Logger } from "../logger.js";
import type { Metrics } from "../metrics/metrics.js";
import { httpRequestInfo, requestIdOf, type RequestInfo } from "../caller/request-info.js";

/** One HTTP request as the edge sees it: its id, when it began, and what routing learnt of it. */
export class Exchange {
  readonly started = performance.now();
  /** The path of the request target, for routing and the log line. */
  readonly path: string;
  /** The route pattern that answered (`/v1/user/:userId`), for the log and the metrics' label. */
  route?: string;
  /** Set once the request enters the pipeline (for the access log's clientId). */
  requestInfo?: RequestInfo;
  private address?: string;

  constructor(
    private readonly req: IncomingMessage,
    readonly requestId: string,
    private readonly clientIp: (req: IncomingMessage) => string,
  ) {
    this.path = pathOf(req.url ?? "/");
  }

  /** The caller's address, as TRUST_PROXY allows it to be read (read once, when first asked). */
  get ip(): string {
    this.address ??= this.clientIp(this.req);
    return this.address;
  }

  /** What the pipeline is told of this request, on the transport it came by. */
  enterPipeline(transport: "graphql-http" | "rest"): RequestInfo {
    this.requestInfo = httpRequestInfo(this.req, transport, { requestId: this.requestId, ip: this.ip });
    return this.requestInfo;
  }
}

/** Probes and scrapes: counted in the metrics, kept out of the access log. */
const UNLOGGED_PATHS = new Set(["/healthz", "/readyz", "/metrics"]);

/** Kept on the request itself: a WeakMap entry per request measured about 4% more CPU on the lookup. */
const EXCHANGE = Symbol("exchange");
type ExchangeHolder = IncomingMessage & { [EXCHANGE]?: Exchange };

/** The exchange `observeExchange` opened for this request. */
export function exchangeOf(req: IncomingMessage): Exchange {
  const exchange = (req as ExchangeHolder)[EXCHANGE];
  if (!exchange) throw new Error("A request reached a handler without an exchange");
  return exchange;
}

export type Edge = { accessLogger: Logger; metrics: Metrics; clientIp: (req: IncomingMessage) => string };

/** The app's first middleware: every request's exchange. */
export function exchanges(edge: Edge) {
  return (req: IncomingMessage, res: ServerResponse, next: NextFunction) => {
    observeExchange(req, res, edge);
    next();
  };
}

/**
 * Opens the request's exchange: its id (a well-formed incoming `x-request-id` is kept, and sent back),
 * and, once the response closes, one access-log line (method, path, route, status, duration, client,
 * request id) and the metrics' count and time by route pattern, never by URL: ids in paths would make
 * a series per resource. Headers, query strings and bodies are not logged: they carry credentials,
 * and GraphQL GET queries carry variables. One listener and one clock per request, written by hand:
 * pino-http built a child logger and serialised the request every time, the largest cost on the
 * lookup path after the socket writes in the profile.
 */
function observeExchange(req: IncomingMessage, res: ServerResponse, edge: Edge): Exchange {
  const { accessLogger, metrics } = edge;
  const exchange = new Exchange(req, requestIdOf(req), edge.clientIp);
  (req as ExchangeHolder)[EXCHANGE] = exchange;
  res.setHeader("x-request-id", exchange.requestId);
  const { method = "GET" } = req;
  // "close" comes after "finish", and also when the caller went away before the answer was sent.
  res.once("close", () => {
    const seconds = (performance.now() - exchange.started) / 1000;
    const route = exchange.route ?? expressRouteOf(req);
    if (res.writableFinished) {
      const labels = { method, route: route ?? "unmatched", status: String(res.statusCode) };
      metrics.httpDuration.observe(labels, seconds);
      metrics.httpRequests.inc(labels);
    }
    const { path } = exchange;
    if (UNLOGGED_PATHS.has(path)) return;
    const line = {
      requestId: exchange.requestId,
      req: { method, path },
      res: { status: res.statusCode, ...(res.writableFinished ? {} : { aborted: true }) },
      route,
      clientId: exchange.requestInfo?.clientId,
      durationMs: Math.round(seconds * 1000),
    };
    if (res.statusCode >= 500) accessLogger.error(line, "request completed");
    else accessLogger.info(line, "request completed");
  });
  return exchange;
}

/**
 * The path of a request target, and only that: `/v1/user/x` of `/v1/user/x?a=b#c`, and of the
 * absolute form `http://user:secret@host/v1/user/x` (whose user part must not reach a log).
 */
export function pathOf(url: string): string {
  const end = url.search(/[?#]/);
  const target = end === -1 ? url : url.slice(0, end);
  if (target.startsWith("/")) return target;
  return URL.canParse(target) ? new URL(target).pathname : target;
}

/**
 * What Express recorded on the request it routed (health, metrics, the pages, provider webhooks): its
 * route's pattern, or the mount path, in lower case (Express matches either in any case: a label per
 * casing sent would grow the series without bound).
 */
function expressRouteOf(req: IncomingMessage): string | undefined {
  const routed = req as IncomingMessage & { route?: { path?: unknown }; baseUrl?: string };
  const mount = routed.baseUrl?.toLowerCase() ?? "";
  if (routed.route?.path) return `${mount}${String(routed.route.path)}`;
  return mount || undefined;
}
