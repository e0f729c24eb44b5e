import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Address } from "viem";
import { userInput } from "./support/http.js";
import { needs, REQUIREMENTS } from "./support/requirements.js";
import { call, createScratchClient, createScratchDatabase, scratchServerEnv, type ScratchDatabase } from "./support/scratch-server.js";
import { testDatabaseUrl } from "./support/server.js";
import { deployToken, liveBaseEnv, startAnvil, type Anvil, type Token } from "./support/chain.js";
import { killInstance, startInstance, type Instance } from "./support/instance.js";
import { until } from "./support/until.js";
import { patient } from "./support/patience.js";

// The watcher across processes, on PostgreSQL: the real server killed with SIGKILL while it catches
// up (resumes with no gap and no repeat), and two instances, one of them with two workers, of
// which exactly one watches the chain, another taking over when it dies.

const CONFIRMATIONS = 2;

describe("the chain watcher across processes", needs(REQUIREMENTS.postgres), () => {
  let database: ScratchDatabase;
  let db: pg.Client;
  let anvil: Anvil;
  let token: Token;
  let headers: Record<string, string>;
  let env: (overrides?: Record<string, string>) => Record<string, string>;
  const running: Instance[] = [];
  let addresses: Address[] = [];

  let dataDir: string | undefined;
  beforeAll(async () => {
    database = await createScratchDatabase(testDatabaseUrl!, "chain");
    db = new pg.Client({ connectionString: database.url });
    await db.connect();
    headers = { "x-api-key": await createScratchClient(database.url, "live"), "content-type": "application/json" };
    anvil = await startAnvil();
    token = await deployToken(anvil);
    await token.mint(anvil.accounts[1], 10n ** 15n);
    const instancesDir = mkdtempSync(join(tmpdir(), "fintech-chain-"));
    dataDir = instancesDir;
    // A lease of 3 × the RPC time-out + 5 polls (15.5 s): a holder slowed by a loaded machine keeps it, so "exactly one" holds.
    env = (overrides = {}) =>
      scratchServerEnv(database.url, instancesDir, { ...liveBaseEnv(anvil, token, { CHAIN_CONFIRMATIONS_BASE: String(CONFIRMATIONS) }), CHAIN_RPC_TIMEOUT_MS: "5000", ...overrides });
    // The custodial addresses, made through one instance.
    const instance = await startInstance(env());
    running.push(instance);
    addresses = [];
    for (let i = 0; i < 6; i++) {
      const user = await call(instance.url, "POST", "/v1/user", headers, userInput());
      const wallet = await call(instance.url, "POST", "/v1/wallet", headers, { userId: user.body.id });
      addresses.push(wallet.body.address);
    }
    await killInstance(instance);
  }, patient(90_000));

  afterAll(async () => {
    for (const instance of running) await killInstance(instance);
    await db?.end();
    await anvil?.stop();
    await database?.drop();
    // The instances' data directory holds the deployment's encrypted master key: nothing is left behind.
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  /** Every chain deposit recorded, and the DEPOSIT journals of each. */
  async function recorded() {
    const { rows } = await db.query<{ eventId: string; status: string; journals: number }>(
      `SELECT d."eventId", d."status", (SELECT count(*)::int FROM "ledger_journals" j WHERE j."referenceId" = d."id"::text AND j."type" = 'DEPOSIT') AS "journals"
       FROM "deposits" d WHERE d."chainId" = $1`,
      [anvil.chainId],
    );
    return rows;
  }

  /** The token's transfers to custodial addresses, from the chain's own logs. */
  async function onChain() {
    const all = await Promise.all(addresses.map((address) => token.transfersTo(address)));
    return all.flat().map((transfer) => `${transfer.transactionHash}:${transfer.logIndex}`);
  }

  const cursor = async () => Number((await db.query(`SELECT "blockNumber" FROM "chain_cursors" WHERE "chainId" = $1`, [anvil.chainId])).rows[0]?.blockNumber ?? -1);

  it("SIGKILLed while it catches up, range after range: after each restart it resumes from its last block, nothing missed, nothing twice", async () => {
    // A backlog while no server runs: 40 transfers to custodial addresses among empty blocks.
    for (let i = 0; i < 40; i++) {
      await token.transfer(anvil.accounts[1], addresses[i % addresses.length], BigInt(1_000_000 + i));
      await anvil.mine(4);
    }
    const head = Number(await anvil.client.getBlockNumber());
    // One block per range: each kill lands while the watcher is behind, a random few ranges after its restart.
    const slow = env({ CHAIN_BLOCK_RANGE: "1" });
    for (let kills = 0; kills < 6; kills++) {
      const instance = await startInstance(slow);
      running.push(instance);
      const from = await cursor();
      const at = from + 3 + Math.floor(Math.random() * 15);
      await until(async () => (await cursor()) >= at, "the watcher to scan", 30_000);
      await killInstance(instance);
      expect(await cursor()).toBeLessThan(head);
    }
    const instance = await startInstance(slow);
    running.push(instance);
    await anvil.mine(CONFIRMATIONS);
    const expected = await onChain();
    expect(expected).toHaveLength(40);
    const rows = await until(async () => {
      const rows = await recorded();
      return rows.length >= expected.length && rows.every((row) => row.status === "COMPLETED") ? rows : undefined;
    }, "every deposit completed", 60_000);
    expect(rows.map((row) => row.eventId).sort()).toEqual([...expected].sort());
    expect(rows.every((row) => row.journals === 1)).toBe(true);
    await killInstance(instance);
  }, patient(180_000));

  it("two instances, one with two workers: exactly one watches; when it dies another takes over", async () => {
    const a = await startInstance(env({ WEB_CONCURRENCY: "2" }));
    const b = await startInstance(env());
    running.push(a, b);
    const holders = () => [...a.lines, ...b.lines].filter((line) => line.includes('"chain watcher took the lease"')).map((line) => JSON.parse(line).holder as string);
    await until(async () => holders().length > 0, "a watcher", 60_000);
    const before = (await recorded()).length;
    for (const address of addresses.slice(0, 3)) await token.transfer(anvil.accounts[1], address, 5_000_000n);
    await anvil.mine(CONFIRMATIONS);
    await until(async () => (await recorded()).length === before + 3 && (await recorded()).every((row) => row.status === "COMPLETED"), "three deposits", 60_000);
    expect(holders()).toHaveLength(1);

    // The holder dies (its whole instance); the lease runs out and another process takes it.
    const holder = holders()[0];
    const dying = a.lines.some((line) => line.includes(holder)) ? a : b;
    await killInstance(dying);
    await token.transfer(anvil.accounts[1], addresses[3], 7_000_000n);
    await anvil.mine(CONFIRMATIONS);
    await until(async () => (await recorded()).length === before + 4 && (await recorded()).every((row) => row.status === "COMPLETED"), "the deposit after the take-over", 60_000);
    // Log lines reach the pipe in batches (at most a quarter of a second late).
    await until(async () => holders().length === 2, "the new holder's log line", 5000);
    expect(new Set(holders()).size).toBe(2);
    expect((await recorded()).every((row) => row.journals === 1)).toBe(true);
  }, patient(240_000));
});
