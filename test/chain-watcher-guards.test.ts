import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Decimal } from "decimal.js";
import { Registry } from "prom-client";
import { DueSettlement } from "../src/rail/due-settlement.js";
import { createChainMetrics } from "../src/metrics/chain.js";
import { moveCursor, readCursor, rewindTo, startCursor, trackDeposit } from "../src/chain/records.js";
import type { SqlDatabase } from "../src/db/sql.js";
import { createLogger } from "../src/logger.js";
import { createUser } from "./support/http.js";
import { REQUIREMENTS, needs } from "./support/requirements.js";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";
import { until } from "./support/until.js";
import { patient } from "./support/patience.js";

// The watcher's guards, each met by the interleaving it exists for, the lease out of the way (these
// call the watcher's own code, as two holders would). What races runs on PostgreSQL only.
let server: TestServer;
let tenant: Tenant;
const hash = (byte: string) => `0x${byte.repeat(32)}`;
const newChainId = () => 2_000_000_000 + Math.floor(Math.random() * 100_000_000);

beforeAll(async () => {
  server = await startServer();
  tenant = await newTenant(server, "live");
}, patient(120_000));
afterAll(() => server?.stop());

describe("the watcher cursor's compare-and-set", needs(REQUIREMENTS.postgres), () => {
  it("two watchers moving the cursor from the same block: the second waits for the first, then finds it moved", async () => {
    const sql = server.app.db.sql;
    const chainId = newChainId();
    const from = { blockNumber: 100n, blockHash: hash("a") };
    await startCursor(sql, chainId, "BASE", { number: from.blockNumber, hash: from.blockHash }, 100n);
    let moved!: () => void;
    const firstMoved = new Promise<void>((resolve) => (moved = resolve));
    let commit!: () => void;
    const committing = new Promise<void>((resolve) => (commit = resolve));
    const first = sql.transaction(async (tx) => {
      const result = await moveCursor(tx, chainId, from, { blockNumber: 110n, blockHash: hash("b") }, 110n);
      moved();
      await committing;
      return result;
    });
    await firstMoved;
    // A second watcher read the same cursor before the first committed, and scanned less far.
    const second = sql.transaction((tx) => moveCursor(tx, chainId, from, { blockNumber: 105n, blockHash: hash("c") }, 105n));
    await until(
      async () => (await sql.query<{ waiting: number }>("test_waiting", `SELECT count(*)::int AS "waiting" FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%chain_cursors%'`, []))[0].waiting > 0,
      "the second watcher to wait on the cursor's row",
    );
    commit();
    expect([await first, await second]).toEqual([true, false]);
    expect(await readCursor(sql, chainId)).toEqual({ blockNumber: 110n, blockHash: hash("b") });
  });
});

describe("settling a deposit only if its row is still in the state it was chosen in", () => {
  it("a rewind between choosing a due deposit and settling it: the deposit is not credited (detached past its depth, it fails)", async () => {
    const sql = server.app.db.sql;
    const { deposits } = server.app.services;
    const chainId = newChainId();
    const userId = await createUser(server, tenant);
    const transactionHash = hash("d");
    const deposit = await sql.transaction(async (tx) => {
      const received = await deposits.receive(tx, {
        provider: "chain-BASE", eventId: `${transactionHash}:0`, clientId: tenant.clientId, userId, amount: new Decimal("4"), currency: "USDC",
        tokenAddress: "0x5FbDB2315678afecb367f032d93F642f64180aa3", transactionHash, chainId, live: true,
      });
      await trackDeposit(tx, received!.id, chainId, { transactionHash, logIndex: 0, blockNumber: 50n, blockHash: hash("e"), transferKey: "k#0" });
      return received!;
    });
    // Another watcher rewinds below the deposit's block right after this one chose it as due.
    let rewound = false;
    const racing: SqlDatabase = {
      query: (name, text, values) => sql.query(name, text, values),
      transaction: async (work) => {
        if (!rewound) {
          rewound = true;
          await sql.transaction((tx) => rewindTo(tx, chainId, 40n));
        }
        return sql.transaction(work);
      },
    };
    const settlement = new DueSettlement({
      network: { name: "BASE", confirmations: 3 },
      sql: racing,
      deposits,
      metrics: createChainMetrics(new Registry()),
      log: createLogger("silent"),
      halted: () => false,
    });
    await settlement.settle(chainId, { blockNumber: 60n, blockHash: hash("f") });
    expect(rewound).toBe(true);
    expect(await server.app.db.prisma.deposit.findUniqueOrThrow({ where: { id: deposit.id } })).toMatchObject({ status: "FAILED", failureReason: expect.stringMatching(/left the canonical chain/) });
    expect(await server.app.db.prisma.chainDeposit.findUniqueOrThrow({ where: { depositId: deposit.id } })).toMatchObject({ blockHash: null, outcome: "FAILED" });
    expect(await server.app.db.prisma.ledgerJournal.count({ where: { referenceId: deposit.id } })).toBe(0);
  });
});
