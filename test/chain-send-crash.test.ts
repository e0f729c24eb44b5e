import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { keccak256, type Address, type Hash } from "viem";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { deployToken, freshAddress, startAnvil, testBaseEnv, testCustody, type Anvil, type Token } from "./support/chain.js";
import { userInput } from "./support/http.js";
import { killInstance, startInstance, type Instance } from "./support/instance.js";
import { needs, REQUIREMENTS } from "./support/requirements.js";
import { startRpcProxy, type RpcProxy } from "./support/rpc-proxy.js";
import { call, createScratchClient, createScratchDatabase, scratchServerEnv, type Answer, type ScratchDatabase } from "./support/scratch-server.js";
import { testDatabaseUrl } from "./support/server.js";
import { until } from "./support/until.js";
import { patient } from "./support/patience.js";

// The sender's exactly-once promises, with the product as real server processes on one PostgreSQL
// database, against a real anvil behind a JSON-RPC proxy that SIGKILLs the server at the moment it
// broadcasts: before the node sees the transaction, or after the node took it but before the server
// heard back. Then ten parallel withdrawals retried under their keys, and two instances with one
// sender. The token's Transfer logs and the transactions' nonces are read from the node: the chain's
// own count, never the product's records.

const CONFIRMATIONS = 3;
const ETH = 10n ** 18n;
// BASE is a test chain here (the sender serves it exactly as a live one), so a test key funds its users with
// sandbox deposits and the test treasury sends.
const { masterKey, testTreasury: treasury } = testCustody();

type Withdrawal = { reference: string; status: string; transactionHash?: string | null };
type StoredSend = { status: string; transactionHash: Hash; nonce: string; broadcastAt: Date | null };

describe("the chain sender across SIGKILLs and instances", needs(REQUIREMENTS.postgres), () => {
  let database: ScratchDatabase;
  let db: pg.Client;
  let anvil: Anvil;
  let token: Token;
  let proxy: RpcProxy;
  let dataDir: string;
  const running: Instance[] = [];

  beforeAll(async () => {
    database = await createScratchDatabase(testDatabaseUrl!, "chainsend");
    db = new pg.Client({ connectionString: database.url });
    await db.connect();
    anvil = await startAnvil();
    token = await deployToken(anvil, { symbol: "USDC", decimals: 6 });
    await token.mint(treasury, 10n ** 12n);
    await anvil.setBalance(treasury, 100n * ETH);
    proxy = await startRpcProxy(anvil.url);
    dataDir = mkdtempSync(join(tmpdir(), "fintech-chain-send-"));
  }, patient(60_000));

  afterEach(async () => {
    for (const instance of running.splice(0)) await killInstance(instance);
  });

  afterAll(async () => {
    await db?.end();
    await proxy?.close();
    await anvil?.stop();
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  /** A server process on the scratch database, its BASE live through the proxy; resolves once it knows the chain's id. */
  async function launch(headers: Record<string, string>): Promise<Instance> {
    const env = scratchServerEnv(database.url, dataDir, {
      ...testBaseEnv(anvil, token, { CHAIN_RPC_URL_BASE: proxy.url, CHAIN_CONFIRMATIONS_BASE: String(CONFIRMATIONS), CHAIN_REPLACE_AFTER_MS: "600000" }),
      CUSTODIAN_MASTER_KEY: masterKey,
    });
    const instance = await startInstance(env);
    running.push(instance);
    await until(async () => {
      const networks = await call(instance.url, "GET", "/v1/networks", headers);
      return (networks.body as { network: string; chainId: number | null }[]).some((n) => n.network === "BASE" && n.chainId === anvil.chainId);
    }, "the instance to learn the chain's id");
    return instance;
  }

  /** A fresh tenant: a client of its own, and its key's headers. */
  const newTenant = async () => ({ "x-api-key": await createScratchClient(database.url), "content-type": "application/json" });

  async function fundedUser(url: string, headers: Record<string, string>, amount: string): Promise<string> {
    const user = await call(url, "POST", "/v1/user", headers, userInput());
    expect(user.status, JSON.stringify(user.body)).toBe(201);
    const deposit = await call(url, "POST", "/v1/sandbox/deposits", headers, { userId: user.body.id, currency: "USDC", amount });
    expect(deposit.status, JSON.stringify(deposit.body)).toBe(201);
    const completed = await call(url, "POST", `/v1/sandbox/deposits/${deposit.body.id}/complete`, headers);
    expect(completed.body.status, JSON.stringify(completed.body)).toBe("COMPLETED");
    return user.body.id;
  }

  const withdraw = (url: string, headers: Record<string, string>, key: string, userId: string, to: Address, amount: string): Promise<Answer> =>
    call(url, "POST", "/v1/withdrawals/usdc", { ...headers, "idempotency-key": key }, { userId, amount, walletAddress: to, network: "BASE", chainId: anvil.chainId });

  async function withdrawal(url: string, headers: Record<string, string>, reference: string): Promise<Withdrawal> {
    const found = await call(url, "GET", `/v1/withdrawals/${reference}`, headers);
    expect(found.status, JSON.stringify(found.body)).toBe(200);
    return found.body;
  }

  /** Mines a block per poll until every withdrawal is COMPLETED (automine gives one block per transaction; the depth needs more). */
  const completed = (url: string, headers: Record<string, string>, references: string[], timeoutMs = 30_000) =>
    until(async () => {
      const all = await Promise.all(references.map((reference) => withdrawal(url, headers, reference)));
      if (all.every((w) => w.status === "COMPLETED")) return all;
      await anvil.mine(1);
      return undefined;
    }, `withdrawals ${references.join(", ")} COMPLETED`, timeoutMs);

  const storedSend = async (reference: string): Promise<StoredSend> =>
    (
      await db.query<StoredSend>(`SELECT "status", "transactionHash", "nonce"::text AS "nonce", "broadcastAt" FROM "chain_sends" WHERE "purpose" = 'WITHDRAWAL' AND "purposeId" = $1`, [
        reference,
      ])
    ).rows[0];

  /** Exactly one transfer of the token to each address, per its logs on the node; their hashes, in the addresses' order. */
  async function oneTransferEach(addresses: Address[]): Promise<Hash[]> {
    const transfers = await Promise.all(addresses.map((address) => token.transfersTo(address)));
    for (const [i, found] of transfers.entries()) expect(found, `transfers to ${addresses[i]}`).toHaveLength(1);
    return transfers.map((found) => found[0].transactionHash);
  }

  /** The nonces of these transactions, as the node has them: consecutive, with no gap and no reuse. */
  async function expectConsecutiveNonces(hashes: Hash[]) {
    const nonces = (await Promise.all(hashes.map(async (hash) => (await anvil.client.getTransaction({ hash })).nonce))).sort((a, b) => a - b);
    expect(nonces).toEqual(nonces.map((_, i) => nonces[0] + i));
  }

  /** `promise`, or an error naming `what` after `ms`. */
  const within = <T>(promise: Promise<T>, ms: number, what: string) =>
    Promise.race([promise, sleep(patient(ms)).then(() => Promise.reject(new Error(`timed out waiting for ${what}`)))]);

  /**
   * A withdrawal requested on an instance that the proxy SIGKILLs at its first broadcast (`when`),
   * then the same request retried under its key on a restarted instance (same database, same env):
   * the withdrawal completes, sent once, as the very transaction stored before the kill.
   */
  async function killedAtBroadcast(when: "before-forwarding" | "before-answering", whileDown: (stored: StoredSend) => Promise<void>) {
    const headers = await newTenant();
    const first = await launch(headers);
    const userId = await fundedUser(first.url, headers, "50");
    const to = freshAddress();
    const key = randomUUID();
    const trapped = proxy.trapNextBroadcast(when, () => killInstance(first));
    // The answer normally comes before the broadcast; if the kill takes it, the retry below gives it.
    const answer = await withdraw(first.url, headers, key, userId, to, "12.5").catch(() => undefined);
    const [raw] = await within(trapped, 30_000, "the first broadcast");
    expect(first.child.signalCode).toBe("SIGKILL");
    const reference = answer?.body.reference ?? (await db.query(`SELECT "purposeId" FROM "chain_sends" WHERE "toAddress" = $1`, [to])).rows[0].purposeId;

    // Signed and stored before the broadcast: the transaction the proxy caught is the one stored.
    const stored = await storedSend(reference);
    expect(stored).toMatchObject({ status: "SIGNED", transactionHash: keccak256(raw), broadcastAt: null });
    await whileDown(stored);

    const second = await launch(headers);
    const retried = await withdraw(second.url, headers, key, userId, to, "12.5");
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    expect(retried.body.reference).toBe(reference);
    if (answer) expect(retried.replayed).toBe(true);
    // PROCESSING with the stored hash as soon as the node has it, before any block is mined here.
    const processing = await until(async () => {
      const found = await withdrawal(second.url, headers, reference);
      return found.status === "PROCESSING" ? found : undefined;
    }, "the withdrawal PROCESSING");
    expect(processing.transactionHash).toBe(stored.transactionHash);
    const [done] = await completed(second.url, headers, [reference]);
    const [onChain] = await oneTransferEach([to]);
    expect(onChain).toBe(stored.transactionHash);
    expect(done.transactionHash).toBe(stored.transactionHash);
    expect((await storedSend(reference)).transactionHash).toBe(stored.transactionHash);
    expect((await anvil.client.getTransaction({ hash: onChain })).nonce).toBe(Number(stored.nonce));
  }

  it("SIGKILLed between signing and broadcasting: after the restart the stored transaction goes out, exactly one transfer", async () => {
    await killedAtBroadcast("before-forwarding", async (stored) => {
      // The node never saw it.
      await expect(anvil.client.getTransaction({ hash: stored.transactionHash })).rejects.toThrow(/could not be found/);
      // Blocks pass while the server is down (the node's fee estimate moves).
      await anvil.mine(2);
    });
  }, patient(90_000));

  for (const automine of [true, false]) {
    const where = automine ? "mined at once" : "left in the node's mempool";
    it(`SIGKILLed between broadcasting and recording it (the transaction ${where}): after the restart, exactly one transfer`, async () => {
      await anvil.rpc("evm_setAutomine", [automine]);
      try {
        await killedAtBroadcast("before-answering", async (stored) => {
          // The node has it; the product never heard so.
          const onNode = await anvil.client.getTransaction({ hash: stored.transactionHash });
          expect(onNode.blockNumber === null).toBe(!automine);
        });
      } finally {
        await anvil.rpc("evm_setAutomine", [true]);
      }
    }, patient(90_000));
  }

  it("ten parallel withdrawals, each request sent twice under its key: ten withdrawals, ten transfers, consecutive nonces", async () => {
    const headers = await newTenant();
    const instance = await launch(headers);
    const userId = await fundedUser(instance.url, headers, "100");
    const requests = Array.from({ length: 10 }, (_, i) => ({ key: randomUUID(), to: freshAddress(), amount: `${i + 1}.25` }));
    const answers = await Promise.all(
      requests.map(async ({ key, to, amount }) => {
        // Both copies at once: one runs, the other replays it or is told it is running (409) and retries.
        const both = await Promise.all([0, 1].map(() => withdraw(instance.url, headers, key, userId, to, amount)));
        for (let retry = 0; retry < 20 && both.some((answer) => answer.status === 409); retry++) {
          await sleep(100);
          for (const [i, answer] of both.entries()) if (answer.status === 409) both[i] = await withdraw(instance.url, headers, key, userId, to, amount);
        }
        return both;
      }),
    );
    const references = answers.map((both) => {
      for (const answer of both) expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(both[0].body.reference).toBe(both[1].body.reference);
      expect(both.filter((answer) => answer.replayed)).toHaveLength(1);
      return both[0].body.reference as string;
    });
    expect(new Set(references).size).toBe(10);
    const listed = await call(instance.url, "GET", `/v1/withdrawals/user/${userId}?limit=100`, headers);
    expect((listed.body as Withdrawal[]).map((w) => w.reference).sort()).toEqual([...references].sort());

    const done = await completed(instance.url, headers, references);
    const hashes = await oneTransferEach(requests.map((request) => request.to));
    expect(done.map((w) => w.transactionHash)).toEqual(hashes);
    await expectConsecutiveNonces(hashes);
  }, patient(90_000));

  it("two instances: one holds the sender lease, withdrawals through both are sent once in nonce order; when the holder dies the other takes over", async () => {
    const headers = await newTenant();
    const instances = [await launch(headers), await launch(headers)];
    const tookLease = (instance: Instance) => instance.lines.filter((line) => line.includes('"chain sender took the lease"')).map((line) => JSON.parse(line).holder as string);
    const lease = async () =>
      (await db.query<{ holder: string }>(`SELECT "holder" FROM "chain_leases" WHERE "chainId" = $1 AND "role" = 'sender' AND "expiresAt" > now()`, [anvil.chainId])).rows;
    const holderOf = async () => {
      const [row] = await lease();
      const holding = instances.filter((instance) => tookLease(instance).includes(row?.holder));
      return holding.length === 1 ? holding[0] : undefined;
    };
    const first = await until(holderOf, "one instance to hold the sender lease");
    const userId = await fundedUser(instances[0].url, headers, "100");

    // Three withdrawals through each instance, all at once.
    const requests = Array.from({ length: 6 }, (_, i) => ({ via: instances[i % 2], to: freshAddress(), amount: `${i + 2}` }));
    const answers = await Promise.all(requests.map(({ via, to, amount }) => withdraw(via.url, headers, randomUUID(), userId, to, amount)));
    for (const answer of answers) expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const references = answers.map((answer) => answer.body.reference as string);
    await completed(instances[0].url, headers, references);
    const before = await oneTransferEach(requests.map((request) => request.to));
    await expectConsecutiveNonces(before);
    // One sender all along: the lease never changed hands, and only one instance ever took it.
    expect(await holderOf()).toBe(first);
    expect([...tookLease(instances[0]), ...tookLease(instances[1])]).toHaveLength(1);

    // The holder dies; its lease runs out and the other instance sends the next withdrawals.
    await killInstance(first);
    const survivor = instances.find((instance) => instance !== first)!;
    const later = Array.from({ length: 2 }, (_, i) => ({ to: freshAddress(), amount: `${i + 1}.5` }));
    const laterAnswers = await Promise.all(later.map(({ to, amount }) => withdraw(survivor.url, headers, randomUUID(), userId, to, amount)));
    for (const answer of laterAnswers) expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    await completed(survivor.url, headers, laterAnswers.map((answer) => answer.body.reference as string));
    const after = await oneTransferEach(later.map((request) => request.to));
    expect(await until(holderOf, "the survivor's lease")).toBe(survivor);
    // Still no gap and no reuse, across the take-over; nothing sent twice before it.
    await expectConsecutiveNonces([...before, ...after]);
    await oneTransferEach(requests.map((request) => request.to));
  }, patient(120_000));
});
