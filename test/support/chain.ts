import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { promisify } from "node:util";
import { dirname, join } from "node:path";
import { callToken, deployTokenContract } from "../../scripts/devnet/token.js";
import { tightenDataDir } from "../../src/db/private-dir.js";
import { PGlite } from "@electric-sql/pglite";
import { embeddedSnapshot } from "./embedded-snapshot.js";
import { testDatabaseUrl } from "./server.js";
import { patient } from "./patience.js";
import { createInterface } from "node:readline";
import {
  createPublicClient,
  createTestClient,
  defineChain,
  http,
  parseEventLogs,
  erc20Abi,
  type Address,
  type Hash,
  type Hex,
  type PublicClient,
} from "viem";
import { HDKey, hdKeyToAccount } from "viem/accounts";

/**
 * A real EVM node for a test file: anvil (from the npm package @foundry-rs/anvil) on a free loopback
 * port, with a chain id of its own (test files share one database, and the watcher's state is per
 * chain id), and the ERC-20 of scripts/devnet/token.ts (compiled from our own source with solc-js).
 * No mock of the chain.
 */

export { tokenArtifact } from "../../scripts/devnet/token.js";

export type Anvil = {
  url: string;
  chainId: number;
  client: PublicClient;
  /** The node's unlocked accounts (they send with eth_sendTransaction: no key in the tests). */
  accounts: Address[];
  mine(blocks?: number): Promise<void>;
  /** Drops the newest `depth` blocks and their transactions (they never come back). */
  rollback(depth: number): Promise<void>;
  /** Replaces the newest `depth` blocks; `transactions` are mined again at their block offset. */
  reorg(depth: number, transactions: [Hex, number][]): Promise<void>;
  rpc(method: string, params: unknown[]): Promise<unknown>;
  /** Sets an address's native coin balance (anvil_setBalance). */
  setBalance(address: Address, wei: bigint): Promise<void>;
  stop(): Promise<void>;
};

const ANVIL = join(import.meta.dirname, "../../node_modules/.bin/anvil");

export async function startAnvil(options: { chainId?: number } = {}): Promise<Anvil> {
  const chainId = options.chainId ?? 100_000 + Math.floor(Math.random() * 1_000_000_000);
  const child = spawn(ANVIL, ["--host", "127.0.0.1", "--port", "0", "--chain-id", String(chainId), "--accounts", "4"], { stdio: ["ignore", "pipe", "pipe"] });
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("anvil did not start")), patient(20_000));
    child.once("exit", (code) => reject(new Error(`anvil exited (${code})`)));
    // Every line is read (anvil logs each transaction): a full pipe would block it.
    createInterface({ input: child.stdout! }).on("line", (line) => {
      const match = /Listening on 127\.0\.0\.1:(\d+)/.exec(line);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.stderr!.resume();
  });
  const url = `http://127.0.0.1:${port}`;
  const chain = defineChain({ id: chainId, name: "anvil", nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: [url] } } });
  // No caching: tests read the head right after mining.
  const client = createPublicClient({ chain, transport: http(url), cacheTime: 0 });
  const test = createTestClient({ chain, mode: "anvil", transport: http(url) });
  const rpc = (method: string, params: unknown[]) => client.request({ method: method as never, params: params as never });
  const accounts = (await rpc("eth_accounts", [])) as Address[];
  return {
    url,
    chainId,
    client: client as PublicClient,
    accounts,
    mine: (blocks = 1) => test.mine({ blocks }),
    rollback: async (depth) => void (await rpc("anvil_rollback", [depth])),
    reorg: async (depth, transactions) => void (await rpc("anvil_reorg", [depth, transactions])),
    rpc,
    setBalance: async (address, wei) => void (await rpc("anvil_setBalance", [address, `0x${wei.toString(16)}`])),
    stop: () => stopChild(child, killOnExit),
  };
}

function stopChild(child: ChildProcess, killOnExit: () => void): Promise<void> {
  process.off("exit", killOnExit);
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

export type Token = {
  address: Address;
  decimals: number;
  /** Mints `amount` base units to `to` (a Transfer from 0x0); the transaction's hash once mined. */
  mint(to: Address, amount: bigint): Promise<Hash>;
  /** `from` (an unlocked account) sends `amount` base units to `to`; the hash once mined. */
  transfer(from: Address, to: Address, amount: bigint): Promise<Hash>;
  transferMany(from: Address, to: Address[], amounts: bigint[]): Promise<Hash>;
  /** The owner pauses (every transfer then reverts) or unpauses the token. */
  setPaused(paused: boolean): Promise<Hash>;
  balanceOf(owner: Address): Promise<bigint>;
  /** The token's Transfer logs to `to`, read from the node: the chain's own count, never the product's. */
  transfersTo(to: Address): Promise<{ transactionHash: Hash; logIndex: number; value: bigint }[]>;
};

/** Deploys the test token from the first account (its owner, who mints). */
export async function deployToken(anvil: Anvil, options: { name?: string; symbol?: string; decimals?: number } = {}): Promise<Token> {
  const decimals = options.decimals ?? 6;
  const owner = anvil.accounts[0];
  const address = await deployTokenContract(anvil.client, owner, { name: options.name ?? "Test USD Coin", symbol: options.symbol ?? "USDC", decimals });
  const call = (from: Address, functionName: string, args: unknown[]) => callToken(anvil.client, from, address, functionName, args);
  return {
    address,
    decimals,
    mint: async (to, amount) => (await call(owner, "mint", [to, amount])).transactionHash,
    transfer: async (from, to, amount) => (await call(from, "transfer", [to, amount])).transactionHash,
    transferMany: async (from, to, amounts) => (await call(from, "transferMany", [to, amounts])).transactionHash,
    setPaused: async (paused) => (await call(owner, "setPaused", [paused])).transactionHash,
    balanceOf: (who) => anvil.client.readContract({ address, abi: erc20Abi, functionName: "balanceOf", args: [who] }),
    async transfersTo(to) {
      const logs = await anvil.client.getLogs({ address, fromBlock: 0n, toBlock: "latest" });
      return parseEventLogs({ abi: erc20Abi, logs, eventName: "Transfer" })
        .filter((log) => log.args.to.toLowerCase() === to.toLowerCase())
        .map((log) => ({ transactionHash: log.transactionHash, logIndex: log.logIndex, value: log.args.value }));
    },
  };
}

/** The env that makes BASE live on this anvil with this token as its USDC (BASE lists only USDC). */
export function liveBaseEnv(anvil: Anvil, token: Token, overrides: Record<string, string> = {}): Record<string, string> {
  return {
    CHAIN_RPC_URL_BASE: anvil.url,
    CHAIN_TOKEN_BASE_USDC: token.address,
    CHAIN_CONFIRMATIONS_BASE: "3",
    CHAIN_POLL_MS: "100",
    // A second to answer, stretched by the load (test/support/patience.ts): on a busy machine anvil answers
    // late, and every pass that times out backs off (up to 30 s), which the tests would wait out.
    CHAIN_RPC_TIMEOUT_MS: String(patient(1000)),
    // anvil prices gas like a quiet Ethereum (1 gwei base fee, 1 gwei tip), far above Base's default ceiling.
    CHAIN_MAX_FEE_GWEI_BASE: "100",
    // No minimum and no network fee unless a test is about them (test/chain-destinations.test.ts): amounts stay as the tests fund them.
    CHAIN_MIN_WITHDRAWAL_BASE_USDC: "0",
    CHAIN_NETWORK_FEE_BASE_USDC: "0",
    ...overrides,
  };
}

/** The same as liveBaseEnv, for test mode: BASE is a test chain (CHAIN_TEST_…) served from the test treasury. */
export function testBaseEnv(anvil: Anvil, token: Token, overrides: Record<string, string> = {}): Record<string, string> {
  const perNetwork = /^CHAIN_(RPC_URL|TOKEN|CONFIRMATIONS|START_BLOCK|MAX_FEE_GWEI|MIN_WITHDRAWAL|NETWORK_FEE)_/;
  return Object.fromEntries(Object.entries(liveBaseEnv(anvil, token, overrides)).map(([name, value]) => [name.replace(perNetwork, "CHAIN_TEST_$1_"), value]));
}

/**
 * A custodian master key for the tests (CUSTODIAN_MASTER_KEY) and its treasuries' addresses, live
 * m/44'/60'/1'/0/0 and test m/44'/60'/3'/0/0, derived here with viem, apart from the product's code.
 */
export function testCustody(seedByte = 11): { masterKey: string; treasury: Address; testTreasury: Address } {
  const masterKey = HDKey.fromMasterSeed(new Uint8Array(64).fill(seedByte)).privateExtendedKey;
  const treasuryOn = (accountIndex: number) => hdKeyToAccount(HDKey.fromExtendedKey(masterKey), { accountIndex, addressIndex: 0 }).address;
  return { masterKey, treasury: treasuryOn(1), testTreasury: treasuryOn(3) };
}

/** A fresh address (nothing was ever sent to it). */
export const freshAddress = (): Address => hdKeyToAccount(HDKey.fromMasterSeed(crypto.getRandomValues(new Uint8Array(32)))).address;

/**
 * `npm run chains -- --json` with this env, against its DATABASE_URL or the tests' database (on the
 * embedded one, an empty one of its own, written from the run's migrated snapshot: creating and migrating
 * one would be most of the script's time). Its JSON is read field by field by the tests' expectations.
 */
export async function chainsReport(env: Record<string, string>): Promise<{ stdout: string; networks: Record<string, any>[] }> {
  const dataDir = mkdtempSync(join(tmpdir(), "fintech-chains-"));
  if (!env.DATABASE_URL && !testDatabaseUrl) await writeMigratedDatabase(join(dataDir, "pgdata"));
  const run = await promisify(execFile)(join(import.meta.dirname, "../../node_modules/.bin/tsx"), ["scripts/chains.ts", "--json"], {
    cwd: join(import.meta.dirname, "../.."),
    env: { PATH: process.env.PATH, ...env, DATA_DIR: dataDir, ...(env.DATABASE_URL || testDatabaseUrl ? { DATABASE_URL: env.DATABASE_URL || testDatabaseUrl } : {}) },
  }).finally(() => rmSync(dataDir, { recursive: true, force: true }));
  return { stdout: run.stdout, networks: JSON.parse(run.stdout) };
}

/** An embedded database on disk at `pgdata`, from the run's migrated snapshot, private as the server leaves one. */
async function writeMigratedDatabase(pgdata: string): Promise<void> {
  const db = await PGlite.create(pgdata, { loadDataDir: await embeddedSnapshot() });
  await db.close();
  tightenDataDir(dirname(pgdata), pgdata);
}
