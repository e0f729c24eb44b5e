import type { IncomingMessage, Server } from "node:http";
import type { Socket } from "node:net";
import cors from "cors";
import express, { type Express } from "express";
import { Redis } from "ioredis";
import proxyAddr from "proxy-addr";
import { serveAdminSocket } from "./admin/socket.js";
import type { Config } from "./config.js";
import { embeddedDataDir, openDatabase, type Database } from "./db/database.js";
import { graphqlOverHttp } from "./gateway/over-http.js";
import { createGraphQLServer } from "./gateway/yoga.js";
import { attachWebSocketServer } from "./gateway/websocket.js";
import { readBody, requireJsonBody } from "./http/body.js";
import { errorHandler, notFoundRoute } from "./rest/express-errors.js";
import { exchanges } from "./http/exchange.js";
import { expressServer } from "./http/express-server.js";
import { IdempotencyRecords } from "./pipeline/idempotency-records.js";
import { createAdmission } from "./pipeline/admission.js";
import { OpenStreams } from "./pipeline/open-streams.js";
import { RateLimits } from "./pipeline/rate-limits.js";
import type { Logger } from "./logger.js";
import { loadOrCreateMasterKey } from "./providers/custodian.js";
import { createSandboxProviders, type Providers } from "./providers/index.js";
import { createMailer, type MailerState } from "./providers/mailer.js";
import { openEventBus } from "./pubsub/bus.js";
import { REST_MOUNT, restRouter } from "./rest/router.js";
import { routes, sandboxRoutes } from "./rest/routes/index.js";
import { createServices, type Services } from "./services.js";
import { mountDeveloperPages } from "./developer/router.js";
import { metricsEndpoint, observeServer } from "./metrics/http.js";
import { createMetrics } from "./metrics/metrics.js";
import { startDepositSettler, type DepositSettler } from "./sandbox/settler.js";
import { mountWebhooks } from "./rest/provider-webhooks.js";
import type { ResolveHost } from "./webhook-endpoints/resolve-host.js";

export type App = {
  /** Listens on config.port (0 picks a free port); resolves to the base URL. */
  start(): Promise<string>;
  /** Stops accepting, lets in-flight requests finish, closes websockets and the database. */
  stop(): Promise<void>;
  readonly url: string;
  readonly db: Database;
  readonly services: Services;
  readonly httpServer: Server;
  /** The Express app: the server's request listener. */
  readonly http: Express;
};

export type AppOptions = {
  config: Config;
  logger: Logger;
  /** Tests use an in-memory embedded database; the server keeps it under DATA_DIR. */
  embeddedDir?: string;
  /** A migrated embedded database to start from (tests; see DatabaseOptions). */
  embeddedSnapshot?: Blob;
  /** Replaces some providers (tests use this to make an external party fail). */
  providers?: Partial<Providers>;
  /** How long a webhook receiver has to answer (default 10 s; tests shorten it). */
  webhookTimeoutMs?: number;
  /** Name resolution for webhook URLs (default: the system's DNS; tests give their own). */
  resolveHost?: ResolveHost;
};

export async function buildApp({ config, logger, embeddedDir, embeddedSnapshot, providers: overrides, webhookTimeoutMs, resolveHost }: AppOptions): Promise<App> {
  const db = await openDatabase({
    url: config.databaseUrl,
    embeddedDir: embeddedDir ?? embeddedDataDir(config.dataDir),
    embeddedSnapshot,
    logger,
  });
  // Commands fail at once while Redis is unreachable (no queue to wait in): the rate limits then count in memory.
  const redis = config.redisUrl ? new Redis(config.redisUrl, { lazyConnect: false, maxRetriesPerRequest: 2, enableOfflineQueue: false }) : undefined;
  redis?.on("error", (err) => logger.warn({ err }, "rate-limit redis connection failed"));
  const mailer = createMailer({ smtpUrl: config.smtpUrl, from: config.mailFrom, logger });
  const masterKey = loadOrCreateMasterKey({
    configured: config.custodianMasterKey,
    dataDir: config.dataDir,
    encryptionKey: config.encryptionKey,
  });
  const providers = { ...createSandboxProviders({ prisma: db.prisma, masterKey }), ...overrides };
  const bus = await openEventBus({
    redisUrl: config.redisUrl,
    postgres: db.pool && config.databaseUrl ? { connectionString: config.databaseUrl, pool: db.pool } : undefined,
    logger,
  });
  const metrics = createMetrics();
  const services = createServices({ prisma: db.prisma, sql: db.sql, config, logger, mailer, providers, masterKey, events: bus.events, metrics, webhookTimeoutMs, resolveHost });
  const admin = db.lockedDataDir ? await serveAdminSocket({ dataDir: db.lockedDataDir, prisma: db.prisma, keys: services.keys, logger }) : undefined;
  const rateLimits = new RateLimits(
    {
      perClient: config.rateLimitPerMinute,
      perIp: config.rateLimitPerMinute * 5,
      signInPerIp: config.signInRateLimitPerMinute,
      authFailuresPerIp: config.authFailureRateLimitPerMinute,
      webhooksPerIp: config.rateLimitPerMinute * 5,
    },
    redis,
    { fallbacks: metrics.rateLimiterFallbacks, logger },
  );
  const streams = new OpenStreams({ perIp: config.websocket.connectionsPerIp, perClient: config.websocket.connectionsPerClient });
  const graphiql = config.env !== "production";
  const admission = createAdmission({ services, rateLimits, introspection: config.introspection, logger });
  const yoga = createGraphQLServer({
    prisma: db.prisma,
    services,
    logger,
    graphiql,
    introspection: config.introspection,
    admission,
    streams,
    idempotency: new IdempotencyRecords({ prisma: db.prisma, encryptionKey: config.encryptionKey, retentionMs: config.retention.ageMs.idempotency }),
    metrics,
  });

  // Express is the HTTP layer: every request goes through this app, in this order.
  const restRoutes = config.sandbox ? [...routes, ...sandboxRoutes] : routes;
  const app = express();
  app.disable("x-powered-by");
  // Every response is per caller and usually changes with the next write: no body hash on each one.
  app.disable("etag");
  app.set("trust proxy", config.trustProxy);
  const trustedProxy = app.get("trust proxy fn") as Parameters<typeof proxyAddr>[1];
  const clientIp = (request: IncomingMessage) => proxyAddr(request, trustedProxy);
  // The access line's fields are fixed and hold no secret, so it skips the logger's redaction walk.
  app.use(exchanges({ accessLogger: logger.child({}, { redact: [] }), metrics, clientIp }));
  // The API first (Express walks its layers in order for every request). Before the /v1 table, what
  // it must never shadow: the OpenAPI document and the developer pages, and provider webhooks, whose
  // signatures cover the raw body (so they come before the body reader).
  mountDeveloperPages(app, restRoutes, { introspection: config.introspection, graphiql });
  mountWebhooks(app, services.webhooks, rateLimits);
  app.use(REST_MOUNT, readBody(), requireJsonBody, restRouter(restRoutes, yoga));
  // Browsers on other origins may call GraphQL (credentials are headers, never cookies).
  app.all("/graphql", cors({ origin: true, maxAge: 600 }), readBody(), graphqlOverHttp({ yoga, logger, admission, graphiql }));
  app.get("/metrics", metricsEndpoint(metrics, config.metricsToken, logger));
  app.get("/healthz", (_req, res) => void res.json({ status: "ok" }));
  // Ready means the database answers. The mailer only carries sign-in codes: its state is reported, never fails the probe.
  app.get("/readyz", async (_req, res) => {
    const [ready, mailerState] = await Promise.all([db.ping(), mailer.state()]);
    if (!ready) res.setHeader("Retry-After", "5");
    res.status(ready ? 200 : 503).json({ status: ready ? "ready" : "database unavailable", database: ready ? "ok" : "unavailable", mailer: mailerState });
  });
  app.use(notFoundRoute);
  app.use(errorHandler(logger));

  const httpServer = expressServer(app);
  const sockets = new Set<Socket>();
  httpServer.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  observeServer(metrics, httpServer, db.pool);
  const websockets = attachWebSocketServer(httpServer, yoga, {
    services,
    watch: services.credentialWatch,
    limits: config.websocket,
    streams,
    rateLimits,
    clientIp,
    logger,
  });
  let url = "";
  let settler: DepositSettler | undefined;
  const logMailerState = (state: MailerState) => {
    if (state === "unreachable") logger.warn({ mailer: state }, "mailer: the SMTP server does not answer; sign-in codes cannot be sent until it does");
    else logger.info({ mailer: state }, state === "log" ? "mailer: SMTP_URL unset, mail is written to the log" : "mailer: the SMTP server answers");
  };

  return {
    db,
    services,
    httpServer,
    http: app,
    get url() {
      return url;
    },
    async start() {
      // A chain configured for both test and live mode refuses the start (those whose RPC answers in time; the others when they do).
      await services.chain.assertModesApart();
      await services.chain.checkTokens();
      return new Promise<string>((resolve, reject) => {
        httpServer.once("error", reject);
        httpServer.listen(config.port, config.host, () => {
          const address = httpServer.address();
          const port = typeof address === "object" && address ? address.port : config.port;
          const host = config.host === "0.0.0.0" || config.host === "::" ? "localhost" : config.host;
          url = `http://${host}:${port}`;
          if (config.sandbox) settler = startDepositSettler({ deposits: services.deposits, sandbox: services.sandboxDeposits, logger });
          if (config.webhookDelivery) services.deliveryWorker.start();
          if (config.retention.enabled) services.retention.start();
          if (config.cardAuthorizationExpiry) services.cardAuthorizationExpiry.start();
          void mailer.state().then(logMailerState);
          // In the background: an unreachable RPC makes its network lag, never the start.
          services.chain.start();
          resolve(url);
        });
      });
    },
    async stop() {
      const closed = new Promise<void>((resolve) => httpServer.close(() => resolve()));
      httpServer.closeIdleConnections();
      await websockets.close();
      // In-flight requests get a grace period; then the remaining sockets are cut.
      const grace = setTimeout(() => sockets.forEach((socket) => socket.destroy()), 5000);
      await closed;
      clearTimeout(grace);
      await settler?.stop();
      services.credentialWatch.close();
      await services.credentials.close();
      await services.keys.close();
      await services.deliveryWorker.stop();
      await services.retention.stop();
      await services.cardAuthorizationExpiry.stop();
      await services.chain.stop();
      mailer.close();
      redis?.disconnect();
      await bus.close();
      await admin?.close();
      await db.close();
    },
  };
}
