// Sends against anvil: `count` USDC withdrawals on a live BASE requested at once over REST (x-api-key,
// Idempotency-Key, JSON), each one's request → PROCESSING seen by a poller, the time until all are
// mined, sends per second; then, from the node alone: their nonces consecutive, exactly `count`
// Transfer logs from the treasury in the blocks of the run, one to each withdrawal's address.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { erc20Abi, getAddress, parseEventLogs, type Address, type Hash } from "viem";
import { HDKey, hdKeyToAccount } from "viem/accounts";
import type { Anvil, Token } from "../test/support/chain.js";
import { startApp } from "./app-server.js";
import { mapConcurrent } from "./drive.js";
import { markdownTable, ms, percentile, section } from "./report.js";
import { newClient, newUsers, withDatabase } from "./setup.js";

export type SendsOptions = { databaseUrl: string; sends: number; pollMs: number };

const MASTER_KEY = HDKey.fromMasterSeed(new Uint8Array(64).fill(29)).privateExtendedKey;
const TREASURY = hdKeyToAccount(HDKey.fromExtendedKey(MASTER_KEY), { accountIndex: 1, addressIndex: 0 }).address;
const CONFIRMATIONS = 3;
/** The poller's period (start to start): the granularity of "PROCESSING observed". */
const OBSERVE_MS = 10;
const AMOUNT = "1.5";
/** The withdrawals are spread over this many users, in turn (200: 10 each, contending for their balances as a real burst would). */
const USERS = 20;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Seen = { status: string; transactionHash: Hash | null };
type Api = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<{ status: number; body: any }>;

function api(baseUrl: string, apiKey: string): Api {
  return async (method, path, body, headers = {}) => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { "x-api-key": apiKey, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  };
}

async function expectOk(call: Promise<{ status: number; body: any }>, what: string) {
  const res = await call;
  if (res.status >= 300) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

type Listed = Seen & { reference: string };

/**
 * The client's withdrawals as stored, read by the bench straight from the database the API reads: a
 * 1 ms query every OBSERVE_MS that costs the server nothing (a poll of the API as fine-grained took
 * the server's CPU from the sends it measured: a GraphQL poll every 20 ms was ~30 ms of its main thread).
 */
function stored(db: pg.Client, clientId: string) {
  return async (): Promise<Listed[]> =>
    (await db.query<Listed>(`SELECT "reference", "status", "transactionHash" FROM "withdrawals" WHERE "clientId" = $1`, [clientId])).rows;
}

/** Every withdrawal of the client, read every OBSERVE_MS: when each was first seen in each status. */
class Poller {
  readonly firstSeen = new Map<string, Map<string, number>>();
  readonly cycles: number[] = [];
  private running = true;
  private failure?: Error;
  private done: Promise<void>;

  constructor(read: () => Promise<Listed[]>) {
    this.done = this.poll(read).catch((err: Error) => void (this.failure = err));
  }

  private async poll(read: () => Promise<Listed[]>) {
    while (this.running) {
      const started = performance.now();
      const withdrawals = await read();
      const at = performance.now();
      this.cycles.push(at - started);
      for (const w of withdrawals) {
        const seen = this.firstSeen.get(w.reference) ?? new Map<string, number>();
        if (!seen.has(w.status)) seen.set(w.status, at);
        this.firstSeen.set(w.reference, seen);
      }
      await sleep(Math.max(0, OBSERVE_MS - (performance.now() - started)));
    }
  }

  /** When the withdrawal was first seen PROCESSING or beyond (a poll can miss a short PROCESSING). */
  processingAt(reference: string): number | undefined {
    if (this.failure) throw this.failure;
    const seen = this.firstSeen.get(reference);
    const times = ["PROCESSING", "COMPLETED"].map((status) => seen?.get(status)).filter((at): at is number => at !== undefined);
    return times.length ? Math.min(...times) : undefined;
  }

  count(status: string, references: string[]) {
    if (this.failure) throw this.failure;
    return references.filter((reference) => this.firstSeen.get(reference)?.has(status)).length;
  }

  async stop() {
    this.running = false;
    await this.done;
  }
}

async function until(condition: () => Promise<boolean> | boolean, what: string, timeoutMs: number, everyMs = 10) {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** Users with 1000 USDC each, through sandbox deposits completed over REST. */
async function fundedUsers(databaseUrl: string, call: Api, clientId: string, count: number) {
  const users = await withDatabase(databaseUrl, ({ prisma }) => newUsers(prisma, clientId, count));
  await mapConcurrent(users, 10, async (userId) => {
    const deposit = await expectOk(call("POST", "/v1/sandbox/deposits", { userId, currency: "USDC", amount: "1000" }), "sandbox deposit");
    await expectOk(call("POST", `/v1/sandbox/deposits/${deposit.id}/complete`), "deposit completion");
  });
  return users;
}

export type SendFigures = {
  latencies: number[];
  responses: number[];
  minedSeconds: number;
  completedSeconds: number;
  poll: { mean: number; max: number };
  nonces: { first: number; consecutive: boolean; fromTreasury: boolean };
  transfers: { logs: number; matching: number };
};

export async function benchSends(options: SendsOptions, anvil: Anvil, token: Token): Promise<SendFigures> {
  await token.mint(TREASURY, 10n ** 15n);
  await anvil.rpc("anvil_setBalance", [TREASURY, `0x${(1000n * 10n ** 18n).toString(16)}`]);
  const { apiKey, clientId } = await withDatabase(options.databaseUrl, ({ prisma }) => newClient(prisma, "test"));
  const app = await startApp(options.databaseUrl, {
    CHAIN_RPC_URL_BASE: anvil.url,
    CHAIN_TOKEN_BASE_USDC: token.address,
    CHAIN_CONFIRMATIONS_BASE: String(CONFIRMATIONS),
    CHAIN_POLL_MS: String(options.pollMs),
    CUSTODIAN_MASTER_KEY: MASTER_KEY,
    SANDBOX: "1",
    SANDBOX_SETTLE_MS: String(24 * 3600_000),
  });
  try {
    return await measure(api(app.url, apiKey), options, anvil, token, clientId);
  } finally {
    await app.stop();
  }
}

async function measure(call: Api, options: SendsOptions, anvil: Anvil, token: Token, clientId: string): Promise<SendFigures> {
  const users = await fundedUsers(options.databaseUrl, call, clientId, USERS);
  const withdraw = (userId: string, to: Address) =>
    call("POST", "/v1/withdrawals/usdc", { userId, amount: Number(AMOUNT), walletAddress: to, network: "BASE", chainId: anvil.chainId }, { "idempotency-key": randomBytes(12).toString("hex") });
  const db = new pg.Client({ connectionString: options.databaseUrl });
  await db.connect();
  const poller = new Poller(stored(db, clientId));
  try {
    // Warm-up: one withdrawal through to COMPLETED (the server knows the RPC's chain id once it is accepted).
    let warm: string | undefined;
    await until(async () => {
      const res = await withdraw(users[0], getAddress(`0x${randomBytes(20).toString("hex")}`));
      warm = res.status === 200 ? res.body.reference : undefined;
      return warm !== undefined;
    }, "the first withdrawal accepted", 30_000, 200);
    await until(async () => {
      if (poller.count("COMPLETED", [warm!])) return true;
      await anvil.mine(1);
      return false;
    }, "the warm-up withdrawal COMPLETED", 30_000, 50);

    const firstBlock = (await anvil.client.getBlockNumber()) + 1n;
    const firstNonce = await anvil.client.getTransactionCount({ address: TREASURY, blockTag: "latest" });
    const destinations = Array.from({ length: options.sends }, () => getAddress(`0x${randomBytes(20).toString("hex")}`));
    const started = performance.now();
    const answers = await Promise.all(
      destinations.map(async (to, i) => {
        const sent = performance.now();
        const res = await withdraw(users[i % USERS], to);
        if (res.status !== 200) throw new Error(`withdrawal: ${res.status} ${JSON.stringify(res.body)}`);
        return { reference: res.body.reference as string, sent, answered: performance.now() };
      }),
    );
    const references = answers.map((a) => a.reference);
    let minedAt = 0;
    await until(async () => {
      const mined = await anvil.client.getTransactionCount({ address: TREASURY, blockTag: "latest" });
      minedAt = performance.now();
      return mined >= firstNonce + options.sends;
    }, "every send mined", 300_000);
    await until(() => references.every((r) => poller.processingAt(r) !== undefined), "every withdrawal PROCESSING", 60_000);
    await anvil.mine(CONFIRMATIONS);
    await until(() => poller.count("COMPLETED", references) === references.length, "every withdrawal COMPLETED", 120_000, 50);
    const completedAt = Math.max(...references.map((r) => poller.firstSeen.get(r)!.get("COMPLETED")!));
    await poller.stop();

    // What the API answers for each, at the end: COMPLETED with the hash that the node is asked about.
    const final = new Map<string, Hash>();
    await mapConcurrent(references, 10, async (reference) => {
      const w = await expectOk(call("GET", `/v1/withdrawals/${reference}`), "withdrawal");
      if (w.status !== "COMPLETED" || !w.transactionHash) throw new Error(`withdrawal ${reference} over REST: ${JSON.stringify(w)}`);
      final.set(reference, w.transactionHash);
    });
    const transactions = await mapConcurrent(references, 20, (r) => anvil.client.getTransaction({ hash: final.get(r)! }));
    const nonces = transactions.map((t) => t.nonce).sort((a, b) => a - b);
    const logs = parseEventLogs({ abi: erc20Abi, eventName: "Transfer", logs: await anvil.client.getLogs({ address: token.address, fromBlock: firstBlock, toBlock: "latest" }) })
      .filter((log) => log.args.from.toLowerCase() === TREASURY.toLowerCase());
    const expected = new Set(references.map((r, i) => `${final.get(r)} ${destinations[i].toLowerCase()}`));
    const units = BigInt(Number(AMOUNT) * 1e6);
    const matching = logs.filter((log) => log.args.value === units && expected.delete(`${log.transactionHash} ${log.args.to.toLowerCase()}`)).length;
    return {
      latencies: answers.map((a) => poller.processingAt(a.reference)! - a.sent),
      responses: answers.map((a) => a.answered - a.sent),
      minedSeconds: (minedAt - started) / 1000,
      completedSeconds: (completedAt - started) / 1000,
      poll: { mean: poller.cycles.reduce((sum, c) => sum + c, 0) / poller.cycles.length, max: Math.max(...poller.cycles) },
      nonces: {
        first: firstNonce,
        consecutive: nonces.every((nonce, i) => nonce === firstNonce + i) && nonces.length === options.sends,
        fromTreasury: transactions.every((t) => t.from.toLowerCase() === TREASURY.toLowerCase()),
      },
      transfers: { logs: logs.length, matching },
    };
  } finally {
    await poller.stop();
    await db.end();
  }
}

/** The report's section; a breach of what must hold (nonces, one transfer each) fails the bench after printing it. */
export function sendsSection(options: SendsOptions, f: SendFigures): string {
  const ok = f.nonces.consecutive && f.nonces.fromTreasury && f.transfers.logs === options.sends && f.transfers.matching === options.sends;
  const text = section(
    `Chain sends: ${options.sends} USDC withdrawals on a live BASE of ${USERS} users requested at once over REST, CHAIN_POLL_MS=${options.pollMs}, ${CONFIRMATIONS} confirmations, anvil automining`,
    markdownTable(
      ["request → PROCESSING p50 ms", "p99 ms", "max ms", "request → response p50 ms", "p99 ms", "all mined s", "sends/s", "all COMPLETED s", "nonces consecutive", "Transfer logs (matching)"],
      [[
        ms(percentile(f.latencies, 50)), ms(percentile(f.latencies, 99)), ms(Math.max(...f.latencies)),
        ms(percentile(f.responses, 50)), ms(percentile(f.responses, 99)),
        f.minedSeconds.toFixed(2), Math.round(options.sends / f.minedSeconds), f.completedSeconds.toFixed(2),
        f.nonces.consecutive && f.nonces.fromTreasury ? `yes (from ${f.nonces.first})` : "NO", `${f.transfers.logs} (${f.transfers.matching})`,
      ]],
    ),
    `PROCESSING as seen in the database the API reads, by the bench, every ${OBSERVE_MS} ms (one read took ${ms(f.poll.mean)} ms on average, ${ms(f.poll.max)} at most), ` +
      "timed from each request being sent. All mined: the treasury's nonce on the latest block reached the last one (times from the first request). " +
      `All COMPLETED: after mining ${CONFIRMATIONS} blocks once all were mined. Transfer logs: the token's logs from the treasury in the run's blocks, (matching) those of each withdrawal's hash, address and amount.`,
  );
  if (!ok) throw new Error(`chain sends broke what must hold:\n${text}`);
  return text;
}
