import { randomBytes } from "node:crypto";
import { existsSync, linkSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join, resolve } from "node:path";
import { z } from "zod";
import { makePrivateDir } from "./db/private-dir.js";
import { readDevnetEnv } from "./chain/devnet-env.js";
import { parseChainSettings, type ChainSettings } from "./chain/networks.js";

const booleanFlag = z
  .enum(["1", "0", "true", "false", "on", "off", "yes", "no"])
  .transform((v) => ["1", "true", "on", "yes"].includes(v));

const secret = z.string().min(32, "must be at least 32 characters");

const EnvSchema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  PORT: z.coerce.number().int().min(0).max(65535).default(4000),
  /** Default: loopback, except in production (all interfaces, for the proxy or container network in front). */
  HOST: z.string().min(1).optional(),
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, "must be a postgresql:// URL").optional(),
  DATA_DIR: z.string().min(1).default("./data"),
  REDIS_URL: z.string().regex(/^rediss?:\/\//, "must be a redis:// URL").optional(),
  JWT_SECRET: secret.optional(),
  ENCRYPTION_KEY: z.string().regex(/^[0-9a-fA-F]{64}$/, "must be 64 hex characters (32 bytes)").optional(),
  /** BIP-32 extended private key (xprv…) of the sandbox custodian; kept under DATA_DIR when unset. */
  CUSTODIAN_MASTER_KEY: z.string().startsWith("xprv").optional(),
  WEBHOOK_SECRET: secret.optional(),
  SMTP_URL: z.string().regex(/^smtps?:\/\//, "must be an smtp:// or smtps:// URL").optional(),
  MAIL_FROM: z.string().min(3).default("Fintech Platform <no-reply@localhost>"),
  SANDBOX: booleanFlag.optional(),
  SANDBOX_SETTLE_MS: z.coerce.number().int().min(0).default(1000),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  GRAPHQL_INTROSPECTION: booleanFlag.optional(),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(600),
  CREDENTIAL_CACHE_MS: z.coerce.number().int().min(0).max(1000).default(1000),
  SIGN_IN_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(20),
  AUTH_FAILURE_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(30),
  TRUST_PROXY: z
    .string()
    .regex(/^(true|false|\d{1,2}|[\w.:/]+(\s*,\s*[\w.:/]+)*)$/, "must be true, false, a hop count, or addresses/subnets/loopback,linklocal,uniquelocal")
    .default("false"),
  WS_MAX_CONNECTIONS_PER_IP: z.coerce.number().int().min(1).default(50),
  WS_MAX_CONNECTIONS_PER_CLIENT: z.coerce.number().int().min(1).default(200),
  WS_MAX_OPERATIONS_PER_CONNECTION: z.coerce.number().int().min(1).default(20),
  METRICS_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),
  WEB_CONCURRENCY: z.coerce.number().int().min(1).max(256).optional(),
  WEBHOOK_DELIVERY: booleanFlag.default(true),
  /** A 2xx within this long is a successful webhook send. */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  /**
   * A send's lease lasts the time-out plus this margin; a send cut off by a crash is retried once
   * the lease has run out. Long enough to cover claiming and recording on a loaded database.
   */
  WEBHOOK_LEASE_MARGIN_MS: z.coerce.number().int().min(500).max(600_000).default(50_000),
  /** Sends one instance's delivery worker keeps going at once. */
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(64),
  /** Sends in flight for one client, across every instance. */
  WEBHOOK_CONCURRENCY_PER_CLIENT: z.coerce.number().int().min(1).max(1000).default(32),
  /** Sends in flight to one endpoint, across every instance: what a receiver gets at once. */
  WEBHOOK_CONCURRENCY_PER_ENDPOINT: z.coerce.number().int().min(1).max(1000).default(16),
  /** Retention (src/retention/job.ts): ages after which rows are deleted. */
  RETENTION: booleanFlag.default(true),
  RETENTION_EVENTS_DAYS: z.coerce.number().int().min(1).default(30),
  RETENTION_DELIVERY_ATTEMPTS_DAYS: z.coerce.number().int().min(1).default(30),
  /** At least the day a client may retry a request in. */
  RETENTION_IDEMPOTENCY_HOURS: z.coerce.number().int().min(24).default(24),
  RETENTION_QUOTES_HOURS: z.coerce.number().int().min(1).default(24),
  /** At least the day the sign-in lockout counts wrong codes over. */
  RETENTION_OTP_HOURS: z.coerce.number().int().min(24).default(48),
  RETENTION_SESSIONS_DAYS: z.coerce.number().int().min(1).default(7),
  RETENTION_REVOKED_KEYS_DAYS: z.coerce.number().int().min(1).default(30),
  RETENTION_INTERVAL_MS: z.coerce.number().int().min(1000).default(60_000),
  RETENTION_BATCH: z.coerce.number().int().min(1).max(10_000).default(500),
  WEBHOOK_ALLOW_PRIVATE_URLS: booleanFlag.optional(),
  WEBHOOK_RETRY_SCHEDULE: z
    .string()
    .default("5s,5m,30m,2h,5h,10h,10h")
    .transform((value, ctx) => {
      const delays = parseDurations(value);
      if (!delays) ctx.addIssue({ code: "custom", message: "must be comma-separated durations with units ms, s, m, h or d (for example 5s,5m,30m)" });
      return delays ?? [];
    }),
  /** Whether this instance runs the card authorization expiry (every instance may; one works at a time). */
  CARD_AUTHORIZATION_EXPIRY: booleanFlag.default(true),
  /** How long a PENDING card authorization holds funds before it expires. */
  CARD_AUTHORIZATION_TTL: z
    .string()
    .default("7d")
    .transform((value, ctx) => {
      const ms = parseDuration(value);
      // At most a year: beyond it, a hold is a freeze, and the expiry time would leave JavaScript's dates.
      if (!ms || ms > 366 * 24 * 3_600_000) ctx.addIssue({ code: "custom", message: "must be a duration with a unit ms, s, m, h or d, up to 366d (for example 500ms, 30s, 5m, 2h, 7d)" });
      return ms ?? 0;
    }),
});

const DURATION = /^(\d{1,9})(ms|s|m|h|d)$/;
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `5s`, `2h`, `7d` → milliseconds; undefined when the text is not a positive duration with a unit. */
export function parseDuration(text: string): number | undefined {
  const match = DURATION.exec(text.trim());
  const ms = match ? Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS] : 0;
  return ms > 0 ? ms : undefined;
}

/** `5s,5m,2h` → milliseconds; undefined when any part is not a positive duration with a unit. */
export function parseDurations(text: string): number[] | undefined {
  const delays = text.split(",").map(parseDuration);
  return delays.every((ms): ms is number => ms !== undefined) ? delays : undefined;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** How old (ms) each kind of row must be before the retention job deletes it; see src/retention/job.ts. */
export type RetentionSettings = {
  enabled: boolean;
  intervalMs: number;
  batch: number;
  ageMs: { events: number; deliveryAttempts: number; idempotency: number; quotes: number; otp: number; sessions: number; revokedKeys: number };
};

export type Config = {
  env: "development" | "production" | "test";
  port: number;
  host: string;
  databaseUrl?: string;
  dataDir: string;
  redisUrl?: string;
  jwtSecret: string;
  encryptionKey: Buffer;
  custodianMasterKey?: string;
  webhookSecret: string;
  /** `WEBHOOK_SECRET_<PROVIDER>` values by variable name; a provider without one uses a secret derived from webhookSecret. */
  webhookProviderSecrets: Record<string, string>;
  smtpUrl?: string;
  mailFrom: string;
  sandbox: boolean;
  sandboxSettleMs: number;
  logLevel: string;
  introspection: boolean;
  rateLimitPerMinute: number;
  signInRateLimitPerMinute: number;
  /** Failed authentications per minute per IP address, on every transport; past them the address is blocked for the window. */
  authFailureRateLimitPerMinute: number;
  /** How long an instance trusts a verified credential (0–1000 ms; a revocation also drops it at once via the event bus). */
  credentialCacheMs: number;
  /** Express's `trust proxy` setting: which hops' X-Forwarded-For to believe for the caller's address. */
  trustProxy: boolean | number | string;
  websocket: { connectionsPerIp: number; connectionsPerClient: number; subscriptionsPerConnection: number };
  /** When set, GET /metrics requires `Authorization: Bearer <token>` (required in production). */
  metricsToken?: string;
  /** Worker processes serving one port (node:cluster); 1 serves from this process. */
  webConcurrency: number;
  /** Whether this instance runs a webhook delivery worker (API-only instances may leave it to others). */
  webhookDelivery: boolean;
  /** Delays before each retry of an outbound webhook delivery, in milliseconds. */
  webhookRetryScheduleMs: number[];
  webhookTimeoutMs: number;
  webhookLeaseMarginMs: number;
  /** Sends in flight at once: per instance (its worker's pool), per client and per endpoint (across every instance). */
  webhookConcurrency: { perInstance: number; perClient: number; perEndpoint: number };
  /** A PENDING card authorization expires (its hold released) this long after it was made. */
  cardAuthorizationTtlMs: number;
  /** Whether this instance runs the expiry of card authorizations. */
  cardAuthorizationExpiry: boolean;
  retention: RetentionSettings;
  /**
   * Whether webhook endpoints may be http and point at loopback, private, link-local or other
   * non-public addresses (WEBHOOK_ALLOW_PRIVATE_URLS; off in production, on elsewhere).
   */
  webhookAllowPrivateUrls: boolean;
  /** The on-chain rail: which networks are live (CHAIN_RPC_URL_<NETWORK>), their tokens and depths (src/chain/networks.ts). */
  chain: ChainSettings;
  /** DATA_DIR/devnet.env when the test chain settings of `npm run devnet` were read from it. */
  devnetSettings?: string;
};

export class ConfigError extends Error {}

/**
 * The cores this process may use: the scheduler's (`availableParallelism`) and, in a container, its
 * cgroup's CPU quota (v2 `cpu.max`, whole cores), whichever is fewer: a pod limited to one core on a
 * 64-core node runs one worker, not 64 (each with its own pool of database connections).
 */
export function availableCores(cpuMaxFile = "/sys/fs/cgroup/cpu.max"): number {
  const cores = availableParallelism();
  let quota: string | undefined;
  let period: string | undefined;
  try {
    [quota, period] = readFileSync(cpuMaxFile, "utf8").trim().split(/\s+/);
  } catch {
    return cores;
  }
  if (!quota || quota === "max" || !Number(period)) return cores;
  return Math.max(1, Math.min(cores, Math.floor(Number(quota) / Number(period))));
}

/** Secrets that production must be given; elsewhere they are generated once and kept in DATA_DIR. */
function persistedSecret(dataDir: string, name: string, make: () => string): string {
  const file = join(dataDir, `${name}.secret`);
  if (!existsSync(file)) {
    makePrivateDir(dataDir);
    // Written whole under a temporary name, then linked into place (fails if it exists): two
    // processes starting together (the server and client:create) end with the same secret.
    const temporary = `${file}.${process.pid}`;
    writeFileSync(temporary, make(), { mode: 0o600 });
    try {
      linkSync(temporary, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    } finally {
      unlinkSync(temporary);
    }
  }
  return readFileSync(file, "utf8").trim();
}

/** `WEBHOOK_SECRET_<PROVIDER>` variables (see src/webhooks/secrets.ts), each held to the rule of WEBHOOK_SECRET. */
function webhookProviderSecrets(env: NodeJS.ProcessEnv): Record<string, string> {
  const entries = Object.entries(env).filter((entry): entry is [string, string] => /^WEBHOOK_SECRET_[A-Z0-9_]+$/.test(entry[0]) && !!entry[1]);
  const invalid = entries.filter(([, value]) => !secret.safeParse(value).success).map(([name]) => `  ${name}: must be at least 32 characters`);
  if (invalid.length) throw new ConfigError(`Invalid configuration:\n${invalid.join("\n")}`);
  return Object.fromEntries(entries);
}

function trustProxySetting(value: string): boolean | number | string {
  if (value === "true" || value === "false") return value === "true";
  return /^\d+$/.test(value) ? Number(value) : value;
}

/** The variables set in `env`: an empty value counts as unset unless `emptyIsSet`. */
const setIn = (env: NodeJS.ProcessEnv, { emptyIsSet = false } = {}) =>
  Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined && (emptyIsSet || entry[1] !== "")));

/** The variables of `schema` read from `env` (an empty value counts as unset), checked by its rules. */
function parseEnv<T extends z.ZodObject>(schema: T, env: NodeJS.ProcessEnv): z.output<T> {
  const parsed = schema.safeParse(setIn(env));
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join("\n")}`);
  }
  return parsed.data;
}

function requireInProduction<T extends { NODE_ENV: string }>(e: T, names: readonly (keyof T & string)[]) {
  if (e.NODE_ENV !== "production") return;
  const missing = names.filter((name) => !e[name]);
  if (missing.length) throw new ConfigError(`Invalid configuration:\n  ${missing.join(", ")}: required in production`);
}

/** What a tool that only opens the database needs (`npm run client:create`): no secret, mailer or server setting. */
export type DatabaseConfig = Pick<Config, "env" | "databaseUrl" | "dataDir">;

const DatabaseEnvSchema = EnvSchema.pick({ NODE_ENV: true, DATABASE_URL: true, DATA_DIR: true });

/** The database settings alone, under the same rules as the server's (PostgreSQL required in production). */
export function loadDatabaseConfig(env: NodeJS.ProcessEnv = process.env): DatabaseConfig {
  const e = parseEnv(DatabaseEnvSchema, env);
  requireInProduction(e, ["DATABASE_URL"]);
  return { env: e.NODE_ENV, databaseUrl: e.DATABASE_URL, dataDir: resolve(e.DATA_DIR) };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const e = parseEnv(EnvSchema, env);
  const providerSecrets = webhookProviderSecrets(env);
  const production = e.NODE_ENV === "production";
  const dataDir = resolve(e.DATA_DIR);
  // `npm run devnet`'s test chain: its CHAIN_TEST_… lines, under the environment's own (src/chain/devnet-env.ts).
  const devnet = production ? undefined : readDevnetEnv(dataDir);
  if (devnet?.issues.length) throw new ConfigError(`Invalid configuration:\n${devnet.issues.join("\n")}`);
  // Every variable set in the environment wins, an empty one included (an empty token contract takes the token off).
  const chain = parseChainSettings({ ...devnet?.values, ...setIn(env, { emptyIsSet: true }) });
  if (chain.issues.length) throw new ConfigError(`Invalid configuration:\n${chain.issues.join("\n")}`);
  requireInProduction(e, ["DATABASE_URL", "JWT_SECRET", "ENCRYPTION_KEY", "WEBHOOK_SECRET", "CUSTODIAN_MASTER_KEY", "SMTP_URL", "METRICS_TOKEN"]);
  const webConcurrency = e.WEB_CONCURRENCY ?? (production ? availableCores() : 1);
  if (webConcurrency > 1 && !e.DATABASE_URL) {
    throw new ConfigError(`Invalid configuration:\n  WEB_CONCURRENCY: ${webConcurrency} workers need PostgreSQL (DATABASE_URL); the embedded database is held by one process`);
  }
  if (e.WEBHOOK_CONCURRENCY_PER_ENDPOINT > e.WEBHOOK_CONCURRENCY_PER_CLIENT) {
    throw new ConfigError(
      `Invalid configuration:\n  WEBHOOK_CONCURRENCY_PER_ENDPOINT: ${e.WEBHOOK_CONCURRENCY_PER_ENDPOINT} is more than WEBHOOK_CONCURRENCY_PER_CLIENT (${e.WEBHOOK_CONCURRENCY_PER_CLIENT}); an endpoint's sends are its client's`,
    );
  }
  const generated = (name: string, bytes: number) =>
    persistedSecret(dataDir, name, () => randomBytes(bytes).toString("hex"));
  return {
    env: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST ?? (production ? "0.0.0.0" : "127.0.0.1"),
    databaseUrl: e.DATABASE_URL,
    dataDir,
    redisUrl: e.REDIS_URL,
    jwtSecret: e.JWT_SECRET ?? generated("jwt", 32),
    encryptionKey: Buffer.from(e.ENCRYPTION_KEY ?? generated("encryption", 32), "hex"),
    custodianMasterKey: e.CUSTODIAN_MASTER_KEY,
    webhookSecret: e.WEBHOOK_SECRET ?? generated("webhook", 32),
    webhookProviderSecrets: providerSecrets,
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    sandbox: e.SANDBOX ?? !production,
    sandboxSettleMs: e.SANDBOX_SETTLE_MS,
    logLevel: e.LOG_LEVEL,
    introspection: e.GRAPHQL_INTROSPECTION ?? !production,
    rateLimitPerMinute: e.RATE_LIMIT_PER_MINUTE,
    signInRateLimitPerMinute: e.SIGN_IN_RATE_LIMIT_PER_MINUTE,
    authFailureRateLimitPerMinute: e.AUTH_FAILURE_RATE_LIMIT_PER_MINUTE,
    credentialCacheMs: e.CREDENTIAL_CACHE_MS,
    trustProxy: trustProxySetting(e.TRUST_PROXY),
    websocket: {
      connectionsPerIp: e.WS_MAX_CONNECTIONS_PER_IP,
      connectionsPerClient: e.WS_MAX_CONNECTIONS_PER_CLIENT,
      subscriptionsPerConnection: e.WS_MAX_OPERATIONS_PER_CONNECTION,
    },
    metricsToken: e.METRICS_TOKEN,
    webConcurrency,
    webhookDelivery: e.WEBHOOK_DELIVERY,
    webhookRetryScheduleMs: e.WEBHOOK_RETRY_SCHEDULE,
    webhookTimeoutMs: e.WEBHOOK_TIMEOUT_MS,
    webhookLeaseMarginMs: e.WEBHOOK_LEASE_MARGIN_MS,
    webhookConcurrency: { perInstance: e.WEBHOOK_CONCURRENCY, perClient: e.WEBHOOK_CONCURRENCY_PER_CLIENT, perEndpoint: e.WEBHOOK_CONCURRENCY_PER_ENDPOINT },
    cardAuthorizationTtlMs: e.CARD_AUTHORIZATION_TTL,
    cardAuthorizationExpiry: e.CARD_AUTHORIZATION_EXPIRY,
    retention: {
      enabled: e.RETENTION,
      intervalMs: e.RETENTION_INTERVAL_MS,
      batch: e.RETENTION_BATCH,
      ageMs: {
        events: e.RETENTION_EVENTS_DAYS * DAY_MS,
        deliveryAttempts: e.RETENTION_DELIVERY_ATTEMPTS_DAYS * DAY_MS,
        idempotency: e.RETENTION_IDEMPOTENCY_HOURS * HOUR_MS,
        quotes: e.RETENTION_QUOTES_HOURS * HOUR_MS,
        otp: e.RETENTION_OTP_HOURS * HOUR_MS,
        sessions: e.RETENTION_SESSIONS_DAYS * DAY_MS,
        revokedKeys: e.RETENTION_REVOKED_KEYS_DAYS * DAY_MS,
      },
    },
    // A developer's receiver runs on their own machine; a deployment reachable by others must opt in.
    webhookAllowPrivateUrls: e.WEBHOOK_ALLOW_PRIVATE_URLS ?? !production,
    chain: chain.settings,
    devnetSettings: devnet && Object.keys(devnet.values).length ? devnet.file : undefined,
  };
}
