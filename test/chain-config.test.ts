import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const load = (env: Record<string, string>) => loadConfig({ NODE_ENV: "test", DATA_DIR: mkdtempSync(join(tmpdir(), "fintech-chain-config-")), ...env });
const USDC_BASE = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";

describe("CHAIN_* configuration", () => {
  it("a network without an RPC stays sandbox; one with an RPC is live, with its defaults and overrides", () => {
    const { chain } = load({
      CHAIN_RPC_URL_BASE: "https://base.example/rpc",
      CHAIN_TOKEN_BASE_USDT: "0x" + "ab".repeat(20),
      CHAIN_CONFIRMATIONS_ETHEREUM: "20",
      CHAIN_POLL_MS: "500",
    });
    const base = chain.networks.find((n) => n.name === "BASE")!;
    expect(base).toMatchObject({ mode: "live", rpcUrl: "https://base.example/rpc", confirmations: 10, tokens: { USDC: USDC_BASE, USDT: "0xABaBaBaBABabABabAbAbABAbABabababaBaBABaB" } });
    expect(chain.networks.find((n) => n.name === "ETHEREUM")).toMatchObject({ mode: "sandbox", confirmations: 20 });
    expect(chain.networks.filter((n) => n.mode === "live").map((n) => n.name)).toEqual(["BASE"]);
    expect(chain).toMatchObject({ pollMs: 500, rpcTimeoutMs: 10_000, blockRange: 1000, watcher: true, replaceAfterMs: 180_000, sweepMin: "10", reconcileIntervalMs: 60_000 });
    expect(load({ CHAIN_SWEEP_MIN: "0.5", CHAIN_REPLACE_AFTER_MS: "60000", CHAIN_RECONCILE_INTERVAL_MS: "0" }).chain).toMatchObject({ sweepMin: "0.5", replaceAfterMs: 60_000, reconcileIntervalMs: 0 });
    expect(load({}).chain.networks.every((n) => n.mode === "sandbox")).toBe(true);
    expect(load({}).chain.pollMs).toBe(2000);
  });

  it("CHAIN_[TEST_]TOKEN_<NETWORK>_<SYMBOL>=none, or empty, takes the token off that network's list in that mode only", () => {
    const networks = load({ CHAIN_TOKEN_ETHEREUM_USDT: "none", CHAIN_TOKEN_ETHEREUM_DAI: "", CHAIN_TEST_TOKEN_ETHEREUM_USDC: "NONE" }).chain.networks;
    const tokens = (name: string, livemode: boolean) => Object.keys(networks.find((n) => n.name === name && n.livemode === livemode)!.tokens);
    expect(tokens("ETHEREUM", true)).toEqual(["USDC"]);
    expect(tokens("ETHEREUM", false)).toEqual(["USDT", "DAI"]);
    expect(tokens("BASE", true)).toEqual(["USDC"]);
    // Any other empty CHAIN_ variable is unset, as before.
    expect(load({ CHAIN_RPC_URL_BASE: "", CHAIN_CONFIRMATIONS_BASE: "" }).chain.networks.find((n) => n.name === "BASE")).toMatchObject({ mode: "sandbox", confirmations: 10 });
  });

  it("the fee ceiling is per network, in gwei: its default, and CHAIN_MAX_FEE_GWEI_<NETWORK> (decimals allowed)", () => {
    const networks = load({ CHAIN_MAX_FEE_GWEI_BASE: "0.25", CHAIN_MAX_FEE_GWEI_ETHEREUM: "80" }).chain.networks;
    const ceiling = (name: string) => networks.find((n) => n.name === name)!.maxFeePerGas;
    expect([ceiling("BASE"), ceiling("ETHEREUM"), ceiling("POLYGON")]).toEqual([250_000_000n, 80_000_000_000n, 2_000_000_000_000n]);
  });

  it.each([
    ["CHAIN_RPC_URL_BASSE", "https://x.example", /BASSE is not a network/],
    ["CHAIN_RPC_URL_BASE", "ws://x.example", /http:\/\/ or https:\/\//],
    ["CHAIN_TOKEN_BASE_USDC", "0x123", /0x contract address/],
    ["CHAIN_TOKEN_BASE_WETH", "0x" + "ab".repeat(20), /one of USDC, USDT, DAI/],
    ["CHAIN_CONFIRMATIONS_BASE", "0", /whole number of blocks/],
    ["CHAIN_POLL_MS", "10", /from 50/],
    ["CHAIN_WATCHER", "maybe", /on or off/],
    ["CHAIN_SWEEP_MIN", "101", /at most 100/],
    ["CHAIN_SWEEP_MIN", "0", /above 0/],
    ["CHAIN_SWEEP_MIN", "1e3", /token amount/],
    ["CHAIN_REPLACE_AFTER_MS", "50", /from 100/],
    ["CHAIN_RECONCILE_INTERVAL_MS", "-1", /whole number from 0/],
    ["CHAIN_MAX_FEE_GWEI_BASE", "0", /fee in gwei above 0/],
    ["CHAIN_MAX_FEE_GWEI_BASE", "1.0000000001", /at most 9 decimals/],
    ["CHAIN_MAX_FEE_GWEI_BASSE", "1", /BASSE is not a network/],
    ["CHAIN_RPC_URLS_BASE", "https://x.example", /CHAIN_RPC_URLS_BASE: unknown/],
  ])("%s=%s is refused, naming it", (name, value, message) => {
    expect(() => load({ [name]: value })).toThrow(ConfigError);
    expect(() => load({ [name]: value })).toThrow(message);
  });
});

describe("DATA_DIR/devnet.env (npm run devnet's settings)", () => {
  const withFile = (text: string) => {
    const dataDir = mkdtempSync(join(tmpdir(), "fintech-devnet-env-"));
    writeFileSync(join(dataDir, "devnet.env"), text);
    return (env: Record<string, string> = {}) => loadConfig({ NODE_ENV: "test", DATA_DIR: dataDir, ...env });
  };
  const testBase = (config: ReturnType<typeof loadConfig>) => config.chain.networks.find((n) => n.name === "BASE" && !n.livemode)!;

  it("its CHAIN_TEST_ lines make a test chain; a variable of the environment wins over its line; production reads no such file", () => {
    const load = withFile("# a comment\n\nCHAIN_TEST_RPC_URL_BASE=http://127.0.0.1:8545\nCHAIN_TEST_CONFIRMATIONS_BASE=3\n");
    const config = load();
    expect(testBase(config)).toMatchObject({ mode: "test", rpcUrl: "http://127.0.0.1:8545", confirmations: 3 });
    expect(config.devnetSettings).toMatch(/devnet\.env$/);
    expect(testBase(load({ CHAIN_TEST_CONFIRMATIONS_BASE: "7" }))).toMatchObject({ rpcUrl: "http://127.0.0.1:8545", confirmations: 7 });
    const production = { NODE_ENV: "production", DATABASE_URL: "postgresql://db/x", JWT_SECRET: "j".repeat(32), ENCRYPTION_KEY: "e".repeat(64), WEBHOOK_SECRET: "w".repeat(32), CUSTODIAN_MASTER_KEY: "xprv1", SMTP_URL: "smtp://mail", METRICS_TOKEN: "m".repeat(16) };
    expect(testBase(load(production)).mode).toBe("sandbox");
  });

  it.each([
    ["CHAIN_RPC_URL_BASE=http://127.0.0.1:8545", /line 1: CHAIN_RPC_URL_BASE: only test chain settings/],
    ["CHAIN_TEST_RPC_URL_BASE=http://127.0.0.1:8545\nDATABASE_URL=postgresql://x/y", /line 2: DATABASE_URL: only test chain settings/],
    ["not a setting", /line 1: not a NAME=value line/],
    ["CHAIN_TEST_RPC_URL_BASSE=http://127.0.0.1:8545", /BASSE is not a network/],
  ])("%s refuses the start, naming the file and the line", (text, message) => {
    const load = withFile(`${text}\n`);
    expect(() => load()).toThrow(ConfigError);
    expect(() => load()).toThrow(message);
  });
});
