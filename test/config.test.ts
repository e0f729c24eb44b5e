import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { availableCores, ConfigError, loadConfig } from "../src/config.js";
import { deriveAddress } from "../src/providers/custodian.js";
import { patient } from "./support/patience.js";

const dataDir = () => mkdtempSync(join(tmpdir(), "fintech-config-"));
const SECRET = "s".repeat(32);
const PRODUCTION = {
  NODE_ENV: "production",
  DATABASE_URL: "postgresql://db.internal/fintech",
  JWT_SECRET: SECRET,
  ENCRYPTION_KEY: "ab".repeat(32),
  WEBHOOK_SECRET: SECRET,
  CUSTODIAN_MASTER_KEY: "xprv9s21ZrQH143K3GJpoapnV8SFfukcVBSfeCficPSGfubmSFDxo1kuHnLisriDvSnRRuL2Qrg5ggqHKNVpxR86QEC8w35uxmGoggxtQTPvfUu",
  SMTP_URL: "smtp://mail.internal:587",
  METRICS_TOKEN: "m".repeat(16),
};

function configErrorOf(env: Record<string, string>): ConfigError {
  try {
    loadConfig({ DATA_DIR: dataDir(), ...env });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error("loadConfig accepted the configuration");
}

describe("loadConfig", () => {
  it("has working defaults for development", () => {
    const config = loadConfig({ DATA_DIR: dataDir() });
    expect(config).toMatchObject({ env: "development", port: 4000, sandbox: true, introspection: true, databaseUrl: undefined, webhookAllowPrivateUrls: true });
    expect(config.jwtSecret.length).toBeGreaterThanOrEqual(32);
    expect(config.encryptionKey).toHaveLength(32);
  });

  it.each([
    { env: {}, host: "127.0.0.1" },
    { env: { HOST: "0.0.0.0" }, host: "0.0.0.0" },
    { env: PRODUCTION, host: "0.0.0.0" },
    { env: { ...PRODUCTION, HOST: "10.0.0.5" }, host: "10.0.0.5" },
  ])("binds to loopback unless in production or told otherwise, and trusts no proxy until TRUST_PROXY names one ($host)", ({ env, host }) => {
    const config = loadConfig({ DATA_DIR: dataDir(), ...env });
    expect(config.host).toBe(host);
    expect(config.trustProxy).toBe(false);
    expect(loadConfig({ DATA_DIR: dataDir(), ...env, TRUST_PROXY: "loopback" }).trustProxy).toBe("loopback");
  });

  it("keeps generated secrets in DATA_DIR across restarts", () => {
    const dir = dataDir();
    const first = loadConfig({ DATA_DIR: dir });
    const second = loadConfig({ DATA_DIR: dir });
    expect(second.jwtSecret).toBe(first.jwtSecret);
    expect(second.encryptionKey.equals(first.encryptionKey)).toBe(true);
    expect(second.webhookSecret).toBe(first.webhookSecret);
  });

  it.each([
    ["PORT", "abc"],
    ["PORT", "70000"],
    ["NODE_ENV", "staging"],
    ["DATABASE_URL", "mysql://localhost/db"],
    ["REDIS_URL", "localhost:6379"],
    ["JWT_SECRET", "too-short"],
    ["ENCRYPTION_KEY", "not-hex"],
    ["WEBHOOK_SECRET", "short"],
    ["WEBHOOK_SECRET_SANDBOX_NGN", "short"],
    ["SMTP_URL", "http://mail.example.com"],
    ["SANDBOX", "maybe"],
    ["LOG_LEVEL", "loud"],
    ["RATE_LIMIT_PER_MINUTE", "0"],
    ["AUTH_FAILURE_RATE_LIMIT_PER_MINUTE", "0"],
    ["AUTH_FAILURE_RATE_LIMIT_PER_MINUTE", "many"],
    ["SANDBOX_SETTLE_MS", "-5"],
    ["GRAPHQL_INTROSPECTION", "sometimes"],
    ["CUSTODIAN_MASTER_KEY", "not-an-xprv"],
    ["METRICS_TOKEN", "short"],
    ["WEBHOOK_RETRY_SCHEDULE", "5s,soon"],
    ["WEBHOOK_RETRY_SCHEDULE", "5"],
    ["WEBHOOK_RETRY_SCHEDULE", "0s"],
    ["WEBHOOK_DELIVERY", "sometimes"],
    ["CARD_AUTHORIZATION_TTL", "7"],
    ["CARD_AUTHORIZATION_TTL", "0s"],
    ["CARD_AUTHORIZATION_TTL", "1w"],
    ["CARD_AUTHORIZATION_TTL", "400d"],
    ["CARD_AUTHORIZATION_TTL", "5m,1h"],
    ["WEBHOOK_CONCURRENCY", "0"],
    ["WEBHOOK_CONCURRENCY_PER_CLIENT", "many"],
    ["WEBHOOK_CONCURRENCY_PER_ENDPOINT", "1.5"],
    ["WEBHOOK_CONCURRENCY_PER_ENDPOINT", "33"],
  ])("refuses %s=%s with a ConfigError naming the variable", (name, value) => {
    expect(configErrorOf({ [name]: value }).message).toContain(name);
  });

  it.each(["DATABASE_URL", "JWT_SECRET", "ENCRYPTION_KEY", "WEBHOOK_SECRET", "CUSTODIAN_MASTER_KEY", "SMTP_URL", "METRICS_TOKEN"])("requires %s in production", (name) => {
    const env: Record<string, string> = { ...PRODUCTION };
    delete env[name];
    const error = configErrorOf(env);
    expect(error.message).toContain(name);
    expect(error.message).toMatch(/required in production/);
  });

  it("accepts a complete production configuration, with the sandbox and introspection off", () => {
    const config = loadConfig({ DATA_DIR: dataDir(), ...PRODUCTION });
    expect(config).toMatchObject({ env: "production", sandbox: false, introspection: false, jwtSecret: SECRET, webhookAllowPrivateUrls: false });
    expect(config.encryptionKey.toString("hex")).toBe("ab".repeat(32));
  });

  it("runs one worker in development and one per core in production, unless WEB_CONCURRENCY says", () => {
    expect(loadConfig({ DATA_DIR: dataDir() }).webConcurrency).toBe(1);
    expect(loadConfig({ DATA_DIR: dataDir(), ...PRODUCTION }).webConcurrency).toBe(availableCores());
    expect(loadConfig({ DATA_DIR: dataDir(), ...PRODUCTION, WEB_CONCURRENCY: "3" }).webConcurrency).toBe(3);
    expect(loadConfig({ DATA_DIR: dataDir(), DATABASE_URL: PRODUCTION.DATABASE_URL, WEB_CONCURRENCY: "2" }).webConcurrency).toBe(2);
  });

  it("counts the cores a container's CPU quota allows, not the host's", () => {
    const cpuMax = (text: string) => {
      const file = join(dataDir(), "cpu.max");
      writeFileSync(file, text);
      return availableCores(file);
    };
    expect(cpuMax("100000 100000\n")).toBe(1);
    expect(cpuMax("150000 100000\n")).toBe(1);
    expect(cpuMax(`${availableParallelism() * 400000} 100000\n`)).toBe(availableParallelism());
    expect(cpuMax("max 100000\n")).toBe(availableParallelism());
    expect(availableCores(join(dataDir(), "absent"))).toBe(availableParallelism());
  });

  it("refuses several workers on the embedded database, which one process holds", () => {
    const error = configErrorOf({ WEB_CONCURRENCY: "2" });
    expect(error.message).toContain("WEB_CONCURRENCY");
    expect(error.message).toContain("DATABASE_URL");
  });

  it("reads switches and numbers", () => {
    const config = loadConfig({ DATA_DIR: dataDir(), SANDBOX: "off", PORT: "8080", RATE_LIMIT_PER_MINUTE: "60", GRAPHQL_INTROSPECTION: "no" });
    expect(config).toMatchObject({ sandbox: false, port: 8080, rateLimitPerMinute: 60, introspection: false });
  });

  it("keeps private webhook URLs off in production whatever SANDBOX says, unless WEBHOOK_ALLOW_PRIVATE_URLS turns them on", () => {
    expect(loadConfig({ DATA_DIR: dataDir(), ...PRODUCTION, SANDBOX: "on" }).webhookAllowPrivateUrls).toBe(false);
    expect(loadConfig({ DATA_DIR: dataDir(), ...PRODUCTION, WEBHOOK_ALLOW_PRIVATE_URLS: "on" }).webhookAllowPrivateUrls).toBe(true);
    expect(loadConfig({ DATA_DIR: dataDir(), WEBHOOK_ALLOW_PRIVATE_URLS: "off" }).webhookAllowPrivateUrls).toBe(false);
    expect(configErrorOf({ WEBHOOK_ALLOW_PRIVATE_URLS: "maybe" }).message).toMatch(/WEBHOOK_ALLOW_PRIVATE_URLS/);
  });

  it("reads the webhook retry schedule in ms, s, m and h, with the documented default", () => {
    expect(loadConfig({ DATA_DIR: dataDir(), WEBHOOK_RETRY_SCHEDULE: "250ms, 2s,3m,1h" }).webhookRetryScheduleMs).toEqual([250, 2000, 180_000, 3_600_000]);
    expect(loadConfig({ DATA_DIR: dataDir() }).webhookRetryScheduleMs).toEqual([5, 300, 1800, 7200, 18_000, 36_000, 36_000].map((s) => s * 1000));
  });

  it("reads CARD_AUTHORIZATION_TTL in ms, s, m, h and d, 7 days by default", () => {
    const ttl = (value?: string) => loadConfig({ DATA_DIR: dataDir(), ...(value ? { CARD_AUTHORIZATION_TTL: value } : {}) }).cardAuthorizationTtlMs;
    expect([ttl("500ms"), ttl("30s"), ttl("5m"), ttl("2h"), ttl("7d"), ttl()]).toEqual([500, 30_000, 300_000, 7_200_000, 604_800_000, 604_800_000]);
    expect(configErrorOf({ CARD_AUTHORIZATION_TTL: "soon" }).message).toMatch(/CARD_AUTHORIZATION_TTL: must be a duration with a unit ms, s, m, h or d/);
  });
});

describe("start-up with a bad configuration", () => {
  // A real process: it loads the whole app before reading the configuration, slow on a busy machine.
  it("stops with exit code 1 and a message naming the variable", { timeout: patient(90_000) }, async () => {
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = execFile(
        join("node_modules", ".bin", "tsx"),
        ["src/main.ts"],
        { env: { ...process.env, DATABASE_URL: "", PORT: "not-a-port", DATA_DIR: dataDir() }, timeout: patient(80_000) },
        (_err, _stdout, stderr) => resolve({ code: child.exitCode, stderr }),
      );
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("PORT");
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});

describe("npm run secrets", () => {
  const printEnv = () =>
    new Promise<Record<string, string>>((resolve, reject) =>
      execFile(join("node_modules", ".bin", "tsx"), ["scripts/secrets.ts"], (err, stdout) =>
        err
          ? reject(err)
          : resolve(Object.fromEntries(stdout.split("\n").filter((line) => /^[A-Z_]+=/.test(line)).map((line) => line.split(/=(.*)/s).slice(0, 2)))),
      ),
    );

  it("prints a .env that production accepts once the database and mail server are filled in, with new secrets each run", { timeout: patient(30_000) }, async () => {
    const [env, other] = await Promise.all([printEnv(), printEnv()]);
    expect(configErrorOf(env).message).toBe("Invalid configuration:\n  DATABASE_URL, SMTP_URL: required in production");
    const config = loadConfig({ ...env, DATABASE_URL: PRODUCTION.DATABASE_URL, SMTP_URL: PRODUCTION.SMTP_URL, DATA_DIR: dataDir() });
    expect(config).toMatchObject({ env: "production", sandbox: false, custodianMasterKey: env.CUSTODIAN_MASTER_KEY, metricsToken: env.METRICS_TOKEN });
    expect(deriveAddress(env.CUSTODIAN_MASTER_KEY, 0)).toMatch(/^0x[0-9a-fA-F]{40}$/);
    for (const name of ["JWT_SECRET", "ENCRYPTION_KEY", "WEBHOOK_SECRET", "CUSTODIAN_MASTER_KEY", "METRICS_TOKEN"]) {
      expect(env[name], name).not.toBe(other[name]);
    }
  });
});
