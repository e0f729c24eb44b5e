import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { getAddress, isAddress, type Address } from "viem";
import { DEVNET_ENV_FILE, parseDevnetEnv } from "../../src/chain/devnet-env.js";
import type { NetworkName } from "../../src/chain/networks.js";
import type { TokenSymbol } from "../../src/providers/chains.js";

/** What the server needs to serve the devnet as test mode's chain for one network. */
export type DevnetSettings = {
  network: NetworkName;
  rpcUrl: string;
  tokens: Partial<Record<TokenSymbol, Address>>;
  confirmations: number;
};

/**
 * Their CHAIN_TEST_… variables. The watcher's first start scans from the genesis block (the devnet's
 * chain is short: it grows only with its transactions); the fee ceiling is well above anvil's gas
 * price (a quiet Ethereum's, over Base's default ceiling).
 */
export function settingsVariables(settings: DevnetSettings): [string, string][] {
  const network = settings.network;
  return [
    [`CHAIN_TEST_RPC_URL_${network}`, settings.rpcUrl],
    ...Object.entries(settings.tokens).map(([symbol, address]): [string, string] => [`CHAIN_TEST_TOKEN_${network}_${symbol}`, address]),
    [`CHAIN_TEST_CONFIRMATIONS_${network}`, String(settings.confirmations)],
    [`CHAIN_TEST_START_BLOCK_${network}`, "0"],
    [`CHAIN_TEST_MAX_FEE_GWEI_${network}`, "100"],
  ];
}

export const settingsFile = (dataDir: string) => join(dataDir, DEVNET_ENV_FILE);

/** Writes DATA_DIR/devnet.env (readable by this OS user only), the file the server reads at start. */
export function writeSettings(dataDir: string, settings: DevnetSettings): string {
  const file = settingsFile(dataDir);
  const lines = [
    "# Written by `npm run devnet`: its local chain as test mode's chain. The server reads this file from",
    "# DATA_DIR at start (CHAIN_TEST_… lines only; a variable set in the environment wins). Delete it to",
    "# make the network simulated again.",
    ...settingsVariables(settings).map(([name, value]) => `${name}=${value}`),
  ];
  writeFileSync(file, `${lines.join("\n")}\n`, { mode: 0o600 });
  return file;
}

/** The settings a devnet wrote to DATA_DIR/devnet.env; undefined when there is no such file or it names no chain. */
export function readSettings(dataDir: string): DevnetSettings | undefined {
  const file = settingsFile(dataDir);
  if (!existsSync(file)) return undefined;
  const { values } = parseDevnetEnv(readFileSync(file, "utf8"), file);
  const rpc = Object.entries(values).find(([name]) => name.startsWith("CHAIN_TEST_RPC_URL_"));
  if (!rpc) return undefined;
  const network = rpc[0].slice("CHAIN_TEST_RPC_URL_".length) as NetworkName;
  const tokens = Object.fromEntries(
    Object.entries(values)
      .filter(([name, value]) => name.startsWith(`CHAIN_TEST_TOKEN_${network}_`) && isAddress(value, { strict: false }))
      .map(([name, value]) => [name.slice(`CHAIN_TEST_TOKEN_${network}_`.length), getAddress(value)]),
  );
  return { network, rpcUrl: rpc[1], tokens, confirmations: Number(values[`CHAIN_TEST_CONFIRMATIONS_${network}`] ?? 1) };
}
