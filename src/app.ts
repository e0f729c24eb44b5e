import { createServer, type Server } from "node:http";
import type { Socket } from "node:net";
import express from "express";
import { Redis } from "ioredis";
import type { Config } from "./config.js";
import { embeddedDataDir, openDatabase, type Database } from "./db/database.js";
import { createGraphQLServer } from "./graphql/yoga.js";
import { schema } from "./graphql/schema.js";
import { attachWebSocketServer } from "./graphql/websocket.js";
import { errorHandler, notFoundRoute } from "./http/errors.js";
import { idempotency } from "./http/idempotency.js";
import { jsonBody } from "./http/json-body.js";
import { rateLimit } from "./http/rate-limit.js";
import type { Logger } from "./logger.js";
import { loadOrCreateMasterKey } from "./providers/custodian.js";
import { createSandboxProviders, type Providers } from "./providers/index.js";
import { createMailer } from "./providers/mailer.js";
import { openEventBus } from "./pubsub/bus.js";
import { restRouter } from "./rest/router.js";
import { routes, sandboxRoutes } from "./rest/routes/index.js";
import { createServices, type Services } from "./services.js";
import { startDepositSettler, type DepositSettler } from "./sandbox/settler.js";
import { webhookRouter } from "./webhooks/router.js";

export type App = {
  /** Listens on config.port (0 picks a free port); resolves to the base URL. */
  start(): Promise<string>;
  /** Stops accepting, lets in-flight requests finish, closes websockets and the database. */
  stop(): Promise<void>;
  readonly url: string;
  readonly db: Database;
  readonly services: Services;
  readonly httpServer: Server;
};

export type AppOptions = {
  config: Config;
  logger: Logger;
  /** Tests use an in-memory embedded database; the server keeps it under DATA_DIR. */
  embeddedDir?: string;
  /** Replaces some providers (tests use this to make an external party fail). */
  providers?: Partial<Providers>;
  /** How long a webhook receiver has to answer (default 10 s; tests shorten it). */
  webhookTimeoutMs?: number;
};

export async function buildApp({ config, logger, embeddedDir, providers: overrides, webhookTimeoutMs }: AppOptions): Promise<App> {
  const db = await openDatabase({
    url: config.databaseUrl,
    embeddedDir: embeddedDir ?? embeddedDataDir(config.dataDir),
    logger,
  });
  const redis = config.redisUrl ? new Redis(config.redisUrl, { lazyConnect: false, maxRetriesPerRequest: 2 }) : undefined;
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
  const services = createServices({ prisma: db.prisma, config, logger, mailer, providers, events: bus.events, webhookTimeoutMs });
  const yoga = createGraphQLServer({
    prisma: db.prisma,
    services,
    logger,
    graphiql: config.env !== "production",
    introspection: config.introspection,
  });

  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", "loopback");
  app.get("/healthz", (_req, res) => void res.json({ status: "ok" }));
  app.get("/readyz", async (_req, res) => {
    const ready = await db.ping();
    res.status(ready ? 200 : 503).json({ status: ready ? "ready" : "database unavailable" });
  });
  // Before the JSON parser: webhook signatures cover the raw body.
  app.use(webhookRouter(services.webhooks));
  app.use(["/v1", "/graphql"], jsonBody("100kb"));
  app.use(["/v1", "/graphql"], rateLimit({ perMinute: config.rateLimitPerMinute, redis }));
  app.use(["/v1", "/graphql"], idempotency({ prisma: db.prisma, services, logger }));
  app.use("/graphql", (req, res) => void yoga.handle(req, res));
  app.use(restRouter(config.sandbox ? [...routes, ...sandboxRoutes] : routes, { schema, prisma: db.prisma, services, logger }));
  app.use(notFoundRoute);
  app.use(errorHandler(logger));

  const httpServer = createServer(app);
  const sockets = new Set<Socket>();
  httpServer.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  const websockets = attachWebSocketServer(httpServer, yoga, services);
  let url = "";
  let settler: DepositSettler | undefined;

  return {
    db,
    services,
    httpServer,
    get url() {
      return url;
    },
    start() {
      return new Promise((resolve, reject) => {
        httpServer.once("error", reject);
        httpServer.listen(config.port, config.host, () => {
          const address = httpServer.address();
          const port = typeof address === "object" && address ? address.port : config.port;
          const host = config.host === "0.0.0.0" || config.host === "::" ? "localhost" : config.host;
          url = `http://${host}:${port}`;
          if (config.sandbox) settler = startDepositSettler({ deposits: services.deposits, sandbox: services.sandboxDeposits, logger });
          if (config.webhookDelivery) services.deliveryWorker.start();
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
      await services.deliveryWorker.stop();
      mailer.close();
      redis?.disconnect();
      await bus.close();
      await db.close();
    },
  };
}
