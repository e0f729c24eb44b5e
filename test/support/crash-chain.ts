import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { Decimal } from "decimal.js";
import pg from "pg";
import { erc20Abi, getAddress, parseEventLogs, type Address } from "viem";
import { HDKey, hdKeyToAccount } from "viem/accounts";
import { deployToken, startAnvil, testBaseEnv, type Anvil, type Token } from "./chain.js";

/**
 * The crash run's chain: an anvil with the test token as BASE's USDC, the test treasury (from a fixed
 * CUSTODIAN_MASTER_KEY) holding tokens and ETH, the env that makes BASE a test chain (the run works with
 * a test key: its sandbox deposits fund the withdrawals, SPEC §15) for every server process
 * of the run, and at the end the count read from the token's own logs: exactly one transfer for each
 * withdrawal COMPLETED, none for one FAILED or refused, none the product does not know.
 */
const MASTER_KEY = HDKey.fromMasterSeed(new Uint8Array(64).fill(7)).privateExtendedKey;
const TREASURY = hdKeyToAccount(HDKey.fromExtendedKey(MASTER_KEY), { accountIndex: 3, addressIndex: 0 }).address;
const CONFIRMATIONS = 3;

/** A withdrawal the run asked for on BASE: its own fresh destination, and the reference if its answer gave one. */
export type ChainRequest = { destination: Address; amount: string; reference?: string };

export type ChainFigures = {
  /** Withdrawal requests on BASE the run sent. */
  requested: number;
  /** Those that were created (their answer, first or retried, was a success). */
  withdrawals: number;
  completed: number;
  failed: number;
  /** Transfer logs from the treasury, read from the node. */
  transfers: number;
  /** Of those, to no address a withdrawal of the run asked for. */
  unknownTransfers: number;
};

export type CrashChain = {
  /** What each server process of the run adds to its env. */
  env: Record<string, string>;
  chainId: number;
  newDestination(): Address;
  setPaused(paused: boolean): Promise<void>;
  /** Mines blocks until every withdrawal with a chain send is COMPLETED or FAILED (or the time is up). */
  settle(db: pg.Client, timeoutMs: number): Promise<void>;
  check(db: pg.Client, requests: ChainRequest[]): Promise<{ figures: ChainFigures; problems: string[] }>;
  stop(): Promise<void>;
};

export async function startCrashChain(): Promise<CrashChain> {
  const anvil = await startAnvil();
  try {
    const token = await deployToken(anvil, { symbol: "USDC", decimals: 6 });
    await token.mint(TREASURY, 10n ** 15n);
    await anvil.rpc("anvil_setBalance", [TREASURY, `0x${(1000n * 10n ** 18n).toString(16)}`]);
    return {
      // Replacement would only add transactions to count: a stuck send is not this run's subject.
      env: { ...testBaseEnv(anvil, token, { CHAIN_CONFIRMATIONS_BASE: String(CONFIRMATIONS), CHAIN_REPLACE_AFTER_MS: "600000" }), CUSTODIAN_MASTER_KEY: MASTER_KEY },
      chainId: anvil.chainId,
      newDestination: () => getAddress(`0x${randomBytes(20).toString("hex")}`),
      setPaused: async (paused) => void (await token.setPaused(paused)),
      settle: (db, timeoutMs) => settle(anvil, db, timeoutMs),
      check: (db, requests) => check(anvil, token, db, requests),
      stop: () => anvil.stop(),
    };
  } catch (err) {
    await anvil.stop();
    throw err;
  }
}

const OPEN_SENDS = `SELECT count(*)::int AS open FROM "withdrawals" w JOIN "chain_sends" s ON s."purpose" = 'WITHDRAWAL' AND s."purposeId" = w."reference"
  WHERE w."status" NOT IN ('COMPLETED', 'FAILED')`;

async function settle(anvil: Anvil, db: pg.Client, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while ((await db.query(OPEN_SENDS)).rows[0].open > 0 && Date.now() < deadline) {
    await anvil.mine(1);
    await sleep(200);
  }
}

async function check(anvil: Anvil, token: Token, db: pg.Client, requests: ChainRequest[]) {
  const problems: string[] = [];
  const logs = parseEventLogs({ abi: erc20Abi, eventName: "Transfer", logs: await anvil.client.getLogs({ address: token.address, fromBlock: 0n, toBlock: "latest" }) }).filter(
    (log) => log.args.from.toLowerCase() === TREASURY.toLowerCase(),
  );
  const logsTo = new Map<string, typeof logs>();
  for (const log of logs) logsTo.set(log.args.to.toLowerCase(), [...(logsTo.get(log.args.to.toLowerCase()) ?? []), log]);
  const stored = new Map(
    (await db.query(`SELECT "reference", "status", "transactionHash" FROM "withdrawals" WHERE "reference" = ANY($1)`, [requests.flatMap((r) => (r.reference ? [r.reference] : []))])).rows.map((row) => [
      row.reference as string,
      row as { status: string; transactionHash: string | null },
    ]),
  );
  const figures: ChainFigures = { requested: requests.length, withdrawals: 0, completed: 0, failed: 0, transfers: logs.length, unknownTransfers: 0 };
  for (const request of requests) {
    const sent = logsTo.get(request.destination.toLowerCase()) ?? [];
    const withdrawal = request.reference ? stored.get(request.reference) : undefined;
    if (!withdrawal) {
      if (sent.length) problems.push(`chain: ${sent.length} transfer(s) to ${request.destination}, whose withdrawal request was refused (${sent.map((log) => log.transactionHash).join(", ")})`);
      continue;
    }
    figures.withdrawals++;
    if (withdrawal.status === "COMPLETED") {
      figures.completed++;
      const units = BigInt(new Decimal(request.amount).times(1e6).toFixed(0));
      if (sent.length !== 1) problems.push(`chain: withdrawal ${request.reference} COMPLETED with ${sent.length} transfers on chain`);
      else if (sent[0].transactionHash !== withdrawal.transactionHash || sent[0].args.value !== units) {
        problems.push(`chain: withdrawal ${request.reference}'s transfer ${sent[0].transactionHash} of ${sent[0].args.value} is not its record's ${withdrawal.transactionHash} of ${units}`);
      }
    } else if (withdrawal.status === "FAILED") {
      figures.failed++;
      if (sent.length) problems.push(`chain: withdrawal ${request.reference} FAILED yet ${sent.length} transfer(s) went out`);
    } else problems.push(`chain: withdrawal ${request.reference} still ${withdrawal.status} after the chain settled`);
  }
  const asked = new Set(requests.map((request) => request.destination.toLowerCase()));
  const unknown = logs.filter((log) => !asked.has(log.args.to.toLowerCase()));
  figures.unknownTransfers = unknown.length;
  if (unknown.length) problems.push(`chain: ${unknown.length} transfer(s) from the treasury the run never asked for: ${unknown.slice(0, 3).map((log) => log.transactionHash).join(", ")}`);
  return { figures, problems };
}
