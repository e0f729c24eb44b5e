import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeFunctionData, type Hash, type Hex } from "viem";
import { takeNonces } from "../src/chain/send-records.js";
import { freshAddress } from "./support/chain.js";
import { SendHarness, units } from "./support/chain-send-harness.js";
import { rest } from "./support/http.js";
import { needs, REQUIREMENTS } from "./support/requirements.js";
import { until } from "./support/until.js";
import { patient } from "./support/patience.js";

// The sender's guards, each with a test that fails without it: a transfer that reverts when mined (not at
// estimation), the stored next nonce as a floor over the node's count, the sender lease, and the lock on the
// nonce row (PostgreSQL: two signers at once, the lease bypassed). A real anvil, three confirmations; what was
// sent is read from the node. The tests share the chain: they run in order.
let h: SendHarness;

beforeAll(async () => {
  h = await SendHarness.start();
}, patient(60_000));

afterAll(async () => {
  await h?.stop();
});

/** With automine off: the token's owner pauses (or unpauses) it in a block of its own. */
async function setPausedInOwnBlock(paused: boolean) {
  const data = encodeFunctionData({ abi: [{ type: "function", name: "setPaused", inputs: [{ name: "p", type: "bool" }], outputs: [], stateMutability: "nonpayable" }], functionName: "setPaused", args: [paused] });
  const hash = (await h.anvil.rpc("eth_sendTransaction", [{ from: h.anvil.accounts[0], to: h.token.address, data }])) as Hash;
  await h.anvil.mine(1);
  expect((await h.anvil.client.getTransactionReceipt({ hash })).status).toBe("success");
}

const pendingCount = () => h.anvil.client.getTransactionCount({ address: h.treasury, blockTag: "pending" });

describe("a transfer that reverts on chain", () => {
  it("passed its estimate, then the token was paused before it was mined: mined with status 0, FAILED at depth with a WITHDRAWAL_REVERSAL; nothing moved", async () => {
    const userId = await h.fundedUser("20");
    const to = freshAddress();
    const reference = await h.withAutomineOff(async () => {
      const reference = await h.withdraw(userId, 7, to);
      const sent = await h.sendIn("WITHDRAWAL", reference, (send) => send.status === "SENT", "broadcast");
      // Out of the pool while the owner pauses the token in a block of its own; then back, as signed.
      await h.anvil.rpc("anvil_dropTransaction", [sent.transactionHash]);
      await setPausedInOwnBlock(true);
      await h.anvil.rpc("eth_sendRawTransaction", [sent.rawTransaction]);
      return reference;
    });
    try {
      const [failed] = await h.mineUntil([reference], "FAILED");
      const send = (await h.sendOf("WITHDRAWAL", reference))!;
      expect((await h.anvil.client.getTransactionReceipt({ hash: send.transactionHash! })).status).toBe("reverted");
      expect(failed.failureReason).toMatch(/reverted on chain/);
      const ledger = await rest(h.server, "GET", `/v1/transactions/ledger/${userId}`, { headers: h.tenant.headers });
      expect((ledger.body as { type: string }[]).map((entry) => entry.type)).toContain("WITHDRAWAL_REVERSAL");
      expect((await h.server.app.services.ledger.balance(h.tenant.clientId, userId, "USDC")).toFixed()).toBe("20");
      expect(await h.token.transfersTo(to)).toEqual([]);
    } finally {
      await h.withAutomineOff(() => setPausedInOwnBlock(false));
    }
  });
});

describe("the stored next nonce", () => {
  it("is a floor over the node's count: a send signed and stored that the node does not have keeps its nonce, and the next send is signed above it", async () => {
    const userId = await h.fundedUser("20");
    const [first, second] = [freshAddress(), freshAddress()];
    const { w1, w2, dropped } = await h.withAutomineOff(async () => {
      const w1 = await h.withdraw(userId, 2, first);
      const dropped = await h.sendIn("WITHDRAWAL", w1, (send) => send.status === "SENT", "broadcast");
      await h.anvil.rpc("anvil_dropTransaction", [dropped.transactionHash]);
      expect(BigInt(await pendingCount())).toBe(dropped.nonce);

      const w2 = await h.withdraw(userId, 3, second);
      const signed = await h.sendIn("WITHDRAWAL", w2, (send) => send.nonce !== null, "signed");
      expect(signed.nonce).toBe(dropped.nonce! + 1n);
      // The node gets the first one back, as signed.
      await h.anvil.rpc("eth_sendRawTransaction", [dropped.rawTransaction as Hex]);
      return { w1, w2, dropped };
    });
    const [done1, done2] = await h.mineUntil([w1, w2], "COMPLETED");
    expect(done1.transactionHash).toBe(dropped.transactionHash);
    expect(await h.token.transfersTo(first)).toEqual([{ transactionHash: dropped.transactionHash, logIndex: expect.any(Number), value: units("2") }]);
    expect(await h.token.transfersTo(second)).toEqual([{ transactionHash: done2.transactionHash, logIndex: expect.any(Number), value: units("3") }]);
    expect((await h.anvil.client.getTransaction({ hash: done2.transactionHash as Hash })).nonce).toBe(Number(dropped.nonce) + 1);
  });
});

describe("the sender lease", () => {
  const LEASE = `
    INSERT INTO "chain_leases" ("chainId", "role", "holder", "expiresAt") VALUES ($1::int, 'sender', $2, now() + $3::int * interval '1 second')
    ON CONFLICT ("chainId", "role") DO UPDATE SET "holder" = EXCLUDED."holder", "expiresAt" = EXCLUDED."expiresAt"`;

  it("while another holder's lease runs, this server signs and sends nothing, pass after pass; once it runs out, this server sends", async () => {
    const sql = h.server.app.db.sql;
    await h.chainPaused(async () => void (await sql.query("test_lease", LEASE, [h.anvil.chainId, "another-instance", 600])));
    const userId = await h.fundedUser("10");
    const to = freshAddress();
    const reference = await h.withdraw(userId, 4, to);
    const passes = async () => (await h.metric("chain_sender_passes_total", { leading: "false" })) ?? 0;
    const from = await passes();
    await until(async () => (await passes()) >= from + 10, "ten passes of this server's sender without the lease");
    expect(await h.sendOf("WITHDRAWAL", reference)).toMatchObject({ status: "QUEUED", nonce: null, transactionHash: null });
    expect((await h.withdrawal(reference)).status).toBe("PENDING");
    expect(await h.token.transfersTo(to)).toEqual([]);

    // The other holder's lease runs out: this server takes it and sends.
    await sql.query("test_lease", LEASE, [h.anvil.chainId, "another-instance", -1]);
    const [done] = await h.mineUntil([reference], "COMPLETED");
    expect(await h.token.transfersTo(to)).toEqual([{ transactionHash: done.transactionHash, logIndex: expect.any(Number), value: units("4") }]);
  });
});

describe("the lock on the nonce row", needs(REQUIREMENTS.postgres), () => {
  it("two signers taking nonces from one address at once (the lease bypassed) never give one twice: the second waits for the first", async () => {
    const sql = h.server.app.db.sql;
    const chainId = h.anvil.chainId;
    const address = freshAddress();
    expect(await sql.transaction((tx) => takeNonces(tx, chainId, address, 0n, 1))).toBe(0n);

    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let firstTook = false;
    const first = sql.transaction(async (tx) => {
      const nonce = await takeNonces(tx, chainId, address, 0n, 2);
      firstTook = true;
      await held;
      return nonce;
    });
    await until(async () => firstTook, "the first signer's nonces");
    let secondDone = false;
    const second = sql.transaction((tx) => takeNonces(tx, chainId, address, 0n, 3)).finally(() => (secondDone = true));
    const waitingForLock = async () =>
      (await sql.query<{ waiting: number }>("test_lock_waits", `SELECT count(*)::int AS "waiting" FROM pg_stat_activity WHERE "wait_event_type" = 'Lock' AND "query" LIKE '%chain_nonces%'`, []))[0]
        .waiting > 0;
    await until(async () => secondDone || (await waitingForLock()), "the second signer to wait for the lock (or to finish)");
    release();
    expect(await first).toBe(1n);
    expect(await second).toBe(3n);
    expect(await sql.transaction((tx) => takeNonces(tx, chainId, address, 0n, 1))).toBe(6n);
  });
});
