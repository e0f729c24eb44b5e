import { getAddress, isAddress, parseGwei, type Address } from "viem";
import { NETWORKS, type TokenSymbol } from "../providers/chains.js";
import { currencyDecimals } from "../providers/fx.js";

export type NetworkName = (typeof NETWORKS)[number]["name"];
/**
 * How a network runs for one client mode (SPEC §15): on a live chain (live mode's CHAIN_RPC_URL_*), on
 * a test chain (test mode's CHAIN_TEST_RPC_URL_*), or simulated by the sandbox (test mode only: in live
 * mode such a network cannot be used).
 */
export type NetworkMode = "live" | "test" | "sandbox";

/**
 * How deep a block must be (head − block + 1) before a deposit in it completes, per network, when
 * CHAIN_CONFIRMATIONS_<NETWORK> is unset. The reasons are in the README's configuration table.
 */
export const DEFAULT_CONFIRMATIONS: Record<NetworkName, number> = {
  // Proof of stake: reorgs deeper than a few blocks have not happened since the Merge; 12 blocks (~2.4 min)
  // leaves a wide margin below finality (64 blocks, ~13 min).
  ETHEREUM: 12,
  // Polygon PoS has reorganised over 100 blocks in the past: 256 blocks (~9 min at 2 s).
  POLYGON: 256,
  // Rollups ordered by one sequencer: its unsafe head is reorganised rarely and shallowly (a sequencer restart).
  BASE: 10,
  OPTIMISM: 10,
  // Blocks every 0.25 s: 40 blocks is 10 s.
  ARBITRUM: 40,
};

/**
 * The most a send may bid per gas (maxFeePerGas, in gwei) when CHAIN_MAX_FEE_GWEI_<NETWORK> is unset: a first
 * signing is held to it, and no replacement is signed above it (the send waits for fees to fall). About ten
 * times the network's usual fee: room for a busy hour, never a runaway (docs/chain.md, Fee ceiling).
 */
export const DEFAULT_MAX_FEE_GWEI: Record<NetworkName, string> = {
  ETHEREUM: "200",
  POLYGON: "2000",
  BASE: "5",
  OPTIMISM: "5",
  ARBITRUM: "5",
};

export const TOKEN_SYMBOLS = ["USDC", "USDT", "DAI"] as const satisfies readonly TokenSymbol[];

/**
 * A withdrawal on a chain: the least it may move, and the network fee the user pays on top of it (booked
 * to the platform's FEES), in whole token units, when CHAIN_[TEST_]MIN_WITHDRAWAL_<NETWORK>_<TOKEN> and
 * CHAIN_[TEST_]NETWORK_FEE_<NETWORK>_<TOKEN> are unset (the same for each dollar stablecoin). A token
 * transfer costs the platform 50,000 to 65,000 gas; each fee covers 65,000 gas at a tenth of the
 * network's default fee ceiling (where sweeps bid) with the native coin at $3,500: Ethereum 65,000 ×
 * 20 gwei = 0.0013 ETH ($4.55); the rollups 65,000 × 0.5 gwei ($0.11); Polygon 65,000 × 200 gwei of POL
 * (under a cent). Sweeps rely on it (sweepThresholds). The minimum keeps dust off the chain
 * (docs/chain.md, Destinations, minimums and network fees).
 */
export const DEFAULT_WITHDRAWAL_RULES: Record<NetworkName, WithdrawalRule> = {
  ETHEREUM: { min: "10", fee: "5" },
  POLYGON: { min: "1", fee: "0.05" },
  BASE: { min: "1", fee: "0.2" },
  OPTIMISM: { min: "1", fee: "0.2" },
  ARBITRUM: { min: "1", fee: "0.2" },
};

/** Whole token units, exact decimal text. */
export type WithdrawalRule = { min: string; fee: string };

/** One network of §4's list as this deployment runs it for one client mode. */
export type NetworkSettings = {
  name: NetworkName;
  /** The client mode it serves: live-mode networks and test-mode networks never share a chain. */
  livemode: boolean;
  mode: NetworkMode;
  /** The chain id of §4's list; a live network's records use the one its RPC reports. */
  listedChainId: number;
  /** On a chain only: the HTTP(S) JSON-RPC endpoint. */
  rpcUrl?: string;
  tokens: Partial<Record<TokenSymbol, Address>>;
  confirmations: number;
  /** The fee ceiling, in wei per gas (CHAIN_MAX_FEE_GWEI_<NETWORK>). */
  maxFeePerGas: bigint;
  /** Live only: where the watcher's first start begins (default: the head it first sees). */
  startBlock?: bigint;
  /** Per token: a withdrawal's minimum and network fee on this chain (unused while the network is simulated). */
  withdrawals: Record<TokenSymbol, WithdrawalRule>;
};

export type ChainSettings = {
  /** Every network of §4's list twice: for live mode, then for test mode. */
  networks: NetworkSettings[];
  /** How often heads are read (CHAIN_POLL_MS). */
  pollMs: number;
  /** How long one JSON-RPC call may take before it counts as failed. */
  rpcTimeoutMs: number;
  /** The most blocks one eth_getLogs asks for. */
  blockRange: number;
  /** Whether this instance may run the watchers and senders (one of each per live network works at a time across instances). */
  watcher: boolean;
  /** A send not mined this long after its broadcast is replaced at its nonce with a higher fee (CHAIN_REPLACE_AFTER_MS). */
  replaceAfterMs: number;
  /** A deposit address is swept once it holds at least this much of a token, in the token's whole units (CHAIN_SWEEP_MIN). */
  sweepMin: string;
  /** How often each mode's books are reconciled against its chains, at most (CHAIN_RECONCILE_INTERVAL_MS; 0: every sender pass). */
  reconcileIntervalMs: number;
};

const NAMES = NETWORKS.map((network) => network.name) as NetworkName[];
/** Per-network variables: `CHAIN_…` configures live mode's network, `CHAIN_TEST_…` test mode's. */
const RPC = /^CHAIN_(TEST_)?RPC_URL_([A-Z0-9_]+)$/;
const TOKEN = /^CHAIN_(TEST_)?TOKEN_([A-Z0-9]+)_([A-Z0-9]+)$/;
const CONFIRMATIONS = /^CHAIN_(TEST_)?CONFIRMATIONS_([A-Z0-9_]+)$/;
const START_BLOCK = /^CHAIN_(TEST_)?START_BLOCK_([A-Z0-9_]+)$/;
const MAX_FEE = /^CHAIN_(TEST_)?MAX_FEE_GWEI_([A-Z0-9_]+)$/;
const WITHDRAWAL_RULE = /^CHAIN_(TEST_)?(MIN_WITHDRAWAL|NETWORK_FEE)_([A-Z0-9]+)_([A-Z0-9]+)$/;
const GLOBAL: Record<string, { min: number; max: number; fallback: number }> = {
  CHAIN_POLL_MS: { min: 50, max: 600_000, fallback: 2000 },
  CHAIN_RPC_TIMEOUT_MS: { min: 100, max: 120_000, fallback: 10_000 },
  CHAIN_BLOCK_RANGE: { min: 1, max: 100_000, fallback: 1000 },
  CHAIN_REPLACE_AFTER_MS: { min: 100, max: 86_400_000, fallback: 180_000 },
  CHAIN_RECONCILE_INTERVAL_MS: { min: 0, max: 86_400_000, fallback: 60_000 },
};
/** The default sweep threshold (whole token units) and the most it may be set to (SPEC §14). */
export const DEFAULT_SWEEP_MIN = "10";
const MAX_SWEEP_MIN = 100;
const FLAG_ON = ["1", "true", "on", "yes"];
const FLAG_OFF = ["0", "false", "off", "no"];
/** CHAIN_[TEST_]TOKEN_<NETWORK>_<SYMBOL> set to one of these (or empty) takes the token off the network's list. */
const NO_TOKEN = ["none", ""];

/**
 * The CHAIN_* variables as typed settings, with one line per refusal. A CHAIN_ name this function
 * does not know is refused too: a misspelt network would otherwise leave it silently in the sandbox.
 */
export function parseChainSettings(env: NodeJS.ProcessEnv): { settings: ChainSettings; issues: string[] } {
  const issues: string[] = [];
  const listed = (livemode: boolean) =>
    new Map<NetworkName, NetworkSettings>(
      NETWORKS.map((network) => [
        network.name,
        {
          name: network.name,
          livemode,
          mode: "sandbox",
          listedChainId: network.chainId,
          tokens: { ...network.tokens },
          confirmations: DEFAULT_CONFIRMATIONS[network.name],
          maxFeePerGas: parseGwei(DEFAULT_MAX_FEE_GWEI[network.name]),
          withdrawals: Object.fromEntries(TOKEN_SYMBOLS.map((symbol) => [symbol, { ...DEFAULT_WITHDRAWAL_RULES[network.name] }])) as Record<TokenSymbol, WithdrawalRule>,
        },
      ]),
    );
  const byMode = { live: listed(true), test: listed(false) };
  const numbers: Record<string, number> = Object.fromEntries(Object.entries(GLOBAL).map(([name, rule]) => [name, rule.fallback]));
  let watcher = true;
  let sweepMin = DEFAULT_SWEEP_MIN;
  const network = (variable: string, test: string | undefined, name: string) => {
    const found = byMode[test ? "test" : "live"].get(name as NetworkName);
    if (!found) issues.push(`  ${variable}: ${name} is not a network (${NAMES.join(", ")})`);
    return found;
  };
  for (const [variable, raw] of Object.entries(env)) {
    if (!variable.startsWith("CHAIN_") || raw === undefined) continue;
    const value = raw.trim();
    let match: RegExpExecArray | null;
    // An empty token variable removes the token (below); any other empty CHAIN_ variable is unset.
    if (value === "" && !TOKEN.test(variable)) continue;
    if ((match = RPC.exec(variable))) {
      const target = network(variable, match[1], match[2]);
      if (!target) continue;
      if (!/^https?:\/\/[^\s]+$/.test(value)) issues.push(`  ${variable}: must be an http:// or https:// JSON-RPC URL`);
      else Object.assign(target, { mode: target.livemode ? "live" : "test", rpcUrl: value });
    } else if ((match = TOKEN.exec(variable))) {
      const target = network(variable, match[1], match[2]);
      if (!target) continue;
      const symbol = match[3] as TokenSymbol;
      if (!(TOKEN_SYMBOLS as readonly string[]).includes(symbol)) issues.push(`  ${variable}: the token must be one of ${TOKEN_SYMBOLS.join(", ")}`);
      else if (NO_TOKEN.includes(value.toLowerCase())) delete target.tokens[symbol];
      else if (!isAddress(value, { strict: false })) issues.push(`  ${variable}: must be a 0x contract address, or none (the network goes without the token)`);
      else target.tokens[symbol] = getAddress(value);
    } else if ((match = CONFIRMATIONS.exec(variable))) {
      const target = network(variable, match[1], match[2]);
      if (!target) continue;
      if (!/^\d{1,5}$/.test(value) || Number(value) < 1) issues.push(`  ${variable}: must be a whole number of blocks, 1 to 99999`);
      else target.confirmations = Number(value);
    } else if ((match = START_BLOCK.exec(variable))) {
      const target = network(variable, match[1], match[2]);
      if (!target) continue;
      if (!/^\d{1,15}$/.test(value)) issues.push(`  ${variable}: must be a block number`);
      else target.startBlock = BigInt(value);
    } else if ((match = MAX_FEE.exec(variable))) {
      const target = network(variable, match[1], match[2]);
      if (!target) continue;
      if (!/^\d{1,6}(\.\d{1,9})?$/.test(value) || parseGwei(value) === 0n) issues.push(`  ${variable}: must be a fee in gwei above 0 (at most 9 decimals)`);
      else target.maxFeePerGas = parseGwei(value);
    } else if ((match = WITHDRAWAL_RULE.exec(variable))) {
      const target = network(variable, match[1], match[3]);
      if (!target) continue;
      const symbol = match[4] as TokenSymbol;
      if (!(TOKEN_SYMBOLS as readonly string[]).includes(symbol)) {
        issues.push(`  ${variable}: the token must be one of ${TOKEN_SYMBOLS.join(", ")}`);
        continue;
      }
      const decimals = currencyDecimals(symbol);
      if (!new RegExp(`^\\d{1,9}(\\.\\d{1,${decimals}})?$`).test(value)) issues.push(`  ${variable}: must be a ${symbol} amount ≥ 0 with at most ${decimals} decimals`);
      else target.withdrawals[symbol][match[2] === "MIN_WITHDRAWAL" ? "min" : "fee"] = value;
    } else if (variable in GLOBAL) {
      const rule = GLOBAL[variable];
      const parsed = Number(value);
      if (!/^\d+$/.test(value) || parsed < rule.min || parsed > rule.max) issues.push(`  ${variable}: must be a whole number from ${rule.min} to ${rule.max}`);
      else numbers[variable] = parsed;
    } else if (variable === "CHAIN_SWEEP_MIN") {
      if (!/^\d{1,3}(\.\d{1,18})?$/.test(value) || Number(value) <= 0 || Number(value) > MAX_SWEEP_MIN) issues.push(`  ${variable}: must be a token amount above 0 and at most ${MAX_SWEEP_MIN}`);
      else sweepMin = value;
    } else if (variable === "CHAIN_WATCHER") {
      if (![...FLAG_ON, ...FLAG_OFF].includes(value)) issues.push(`  ${variable}: must be on or off`);
      else watcher = FLAG_ON.includes(value);
    } else {
      issues.push(`  ${variable}: unknown (CHAIN_[TEST_]RPC_URL_<NETWORK>, CHAIN_[TEST_]TOKEN_<NETWORK>_<SYMBOL>, CHAIN_[TEST_]CONFIRMATIONS_<NETWORK>, CHAIN_[TEST_]START_BLOCK_<NETWORK>, CHAIN_[TEST_]MAX_FEE_GWEI_<NETWORK>, CHAIN_[TEST_]MIN_WITHDRAWAL_<NETWORK>_<SYMBOL>, CHAIN_[TEST_]NETWORK_FEE_<NETWORK>_<SYMBOL>, ${Object.keys(GLOBAL).join(", ")}, CHAIN_SWEEP_MIN, CHAIN_WATCHER)`);
    }
  }
  const sameRpc = [...byMode.test.values()].flatMap((test) =>
    [...byMode.live.values()].filter((live) => live.rpcUrl && live.rpcUrl === test.rpcUrl).map((live) => `  CHAIN_TEST_RPC_URL_${test.name} and CHAIN_RPC_URL_${live.name}: one chain cannot serve both test and live mode`),
  );
  issues.push(...sameRpc);
  return {
    settings: {
      networks: [...byMode.live.values(), ...byMode.test.values()],
      pollMs: numbers.CHAIN_POLL_MS,
      rpcTimeoutMs: numbers.CHAIN_RPC_TIMEOUT_MS,
      blockRange: numbers.CHAIN_BLOCK_RANGE,
      replaceAfterMs: numbers.CHAIN_REPLACE_AFTER_MS,
      reconcileIntervalMs: numbers.CHAIN_RECONCILE_INTERVAL_MS,
      sweepMin,
      watcher,
    },
    issues,
  };
}

/** The deposit records of a live network carry this provider, followed by the network (the sandbox never settles them). */
export const CHAIN_PROVIDER_PREFIX = "chain-";
export const chainProvider = (network: string) => `${CHAIN_PROVIDER_PREFIX}${network.toLowerCase()}`;

/** The networks on a chain (live or test), whose watchers and senders run. */
export const chainNetworks = (settings: ChainSettings) => settings.networks.filter((network) => network.mode !== "sandbox");

/** How logs and metrics name a network: test mode's carry a suffix, so both modes of one network stay apart. */
export const networkLabel = (network: Pick<NetworkSettings, "name" | "livemode">) => (network.livemode ? network.name : `${network.name}_TEST`);
