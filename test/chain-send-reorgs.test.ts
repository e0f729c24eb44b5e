import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseGwei, parseTransaction, type Address, type Hash, type Hex } from "viem";
import { HDKey, hdKeyToAccount } from "viem/accounts";
import { freshAddress } from "./support/chain.js";
import { SendHarness, units } from "./support/chain-send-harness.js";
import { until } from "./support/until.js";
import { patient } from "./support/patience.js";

// The sender under a reorg deeper than the confirmation depth, and under fees that would run away: on a real
// anvil (three confirmations, a 100 ms poll), both databases. What was sent is read from the token's own logs
// and the node's transactions, never from the product's records. The tests share the chain: they run in order.
let h: SendHarness;

beforeAll(async () => {
  h = await SendHarness.start();
}, patient(60_000));

afterAll(async () => {
  await h?.stop();
});

const DROPPED = "a confirmed send left the chain: a reorg deeper than the confirmation depth; broadcasting the same transaction again";

/** One transfer of the token to each address, per its logs on the node; their hashes. */
async function oneTransferEach(expected: { to: Address; amount: string }[]): Promise<Hash[]> {
  const hashes: Hash[] = [];
  for (const { to, amount } of expected) {
    const found = await h.token.transfersTo(to);
    expect(found, `transfers to ${to}`).toEqual([{ transactionHash: expect.any(String), logIndex: expect.any(Number), value: units(amount) }]);
    hashes.push(found[0].transactionHash);
  }
  return hashes;
}

async function expectConsecutiveNonces(hashes: Hash[]) {
  const nonces = (await Promise.all(hashes.map(async (hash) => (await h.anvil.client.getTransaction({ hash })).nonce))).sort((a, b) => a - b);
  expect(nonces).toEqual(nonces.map((_, i) => nonces[0] + i));
}

/** Drops the blocks from the one that mined `hash` to the head (anvil_rollback: their transactions never come back). */
async function rollBackPast(blockNumber: bigint) {
  const head = await h.anvil.client.getBlockNumber({ cacheTime: 0 });
  await h.anvil.rollback(Number(head - blockNumber + 1n));
}

describe("a reorg deeper than the confirmation depth", () => {
  it("takes a COMPLETED withdrawal's transfer off the chain: the same transaction goes out again, the sends signed behind the gap follow; an error, a metric and a gauge", async () => {
    const userId = await h.fundedUser("100");
    const first = { to: freshAddress(), amount: "4" };
    const w1 = await h.withdraw(userId, 4, first.to);
    await h.mineUntil([w1], "COMPLETED");
    const confirmed = (await h.sendOf("WITHDRAWAL", w1))!;
    expect(confirmed.status).toBe("CONFIRMED");
    const reorgsBefore = (await h.metric("chain_sends_reorged_total")) ?? 0;

    await rollBackPast(confirmed.blockNumber!);
    expect(await h.token.transfersTo(first.to)).toEqual([]);
    // The platform's next nonce is now above the chain's count: W2 and W3 are signed behind the gap.
    expect(await h.storedNonce()).toBeGreaterThan(BigInt(await h.treasuryCount()));
    const later = [
      { to: freshAddress(), amount: "2" },
      { to: freshAddress(), amount: "3" },
    ];
    // Nothing mined for a while: the state between the reorg and the send's new confirmation can be seen.
    await h.anvil.rpc("evm_setAutomine", [false]);
    let w2: string, w3: string;
    try {
      [w2, w3] = [await h.withdraw(userId, 2, later[0].to), await h.withdraw(userId, 3, later[1].to)];
      // Found, flagged and counted while it is off its depth again.
      const reopened = await h.sendIn("WITHDRAWAL", w1, (send) => send.reorgedAt !== null && send.status === "SENT", "reorged and sent again");
      expect(reopened.transactionHash).toBe(confirmed.transactionHash);
      expect((await h.anvil.client.getTransaction({ hash: confirmed.transactionHash! })).blockNumber).toBeNull();
      await until(async () => (await h.metric("chain_sends_reorged")) === 1, "chain_sends_reorged 1");
      expect(await h.metric("chain_sends_reorged_total")).toBe(reorgsBefore + 1);
      const errors = h.logLines(DROPPED);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({ level: 50, purpose: "WITHDRAWAL", purposeId: w1, transactionHash: confirmed.transactionHash });
    } finally {
      await h.anvil.rpc("evm_setAutomine", [true]);
    }

    await h.mineUntil([w1, w2, w3], "COMPLETED");
    const hashes = await oneTransferEach([first, ...later]);
    expect(hashes[0]).toBe(confirmed.transactionHash);
    await expectConsecutiveNonces(hashes);
    // The nonces are the chain's again.
    expect(await h.storedNonce()).toBe(BigInt(await h.treasuryCount()));
    await until(async () => (await h.metric("chain_sends_reorged")) === 0, "chain_sends_reorged back to 0");
    expect(h.logLines(DROPPED)).toHaveLength(1);
  });

  it("found long after (the sender stopped through the reorg and many blocks): the nonces resync once the address sends again", async () => {
    const userId = await h.fundedUser("100");
    const first = { to: freshAddress(), amount: "5" };
    const w1 = await h.withdraw(userId, 5, first.to);
    await h.mineUntil([w1], "COMPLETED");
    const confirmed = (await h.sendOf("WITHDRAWAL", w1))!;

    await h.chainPaused(async () => {
      await rollBackPast(confirmed.blockNumber!);
      await h.anvil.mine(200); // past any re-check window of its block
    });
    expect(await h.storedNonce()).toBe(confirmed.nonce! + 1n);
    expect(BigInt(await h.treasuryCount())).toBe(confirmed.nonce);

    const second = { to: freshAddress(), amount: "6" };
    const w2 = await h.withdraw(userId, 6, second.to);
    await h.mineUntil([w1, w2], "COMPLETED");
    const hashes = await oneTransferEach([first, second]);
    expect(hashes[0]).toBe(confirmed.transactionHash);
    await expectConsecutiveNonces(hashes);
    expect(await h.storedNonce()).toBe(BigInt(await h.treasuryCount()));
  });
});

describe("a send whose nonce another transaction took", () => {
  it("is ORPHANED once that transaction is at the confirmation depth: an error and a metric, never signed again elsewhere", async () => {
    const userId = await h.fundedUser("10");
    const to = freshAddress();
    const treasuryKey = hdKeyToAccount(HDKey.fromExtendedKey(h.custody.masterKey), { accountIndex: 1, addressIndex: 0 });
    const reference = await h.withAutomineOff(async () => {
      const reference = await h.withdraw(userId, 1, to);
      const sent = await h.sendIn("WITHDRAWAL", reference, (send) => send.status === "SENT", "broadcast");
      // The treasury's key used outside the platform: a transfer of nothing to itself at the send's nonce, outbidding it.
      const foreign = await treasuryKey.signTransaction({
        type: "eip1559",
        chainId: h.anvil.chainId,
        nonce: Number(sent.nonce),
        to: h.treasury,
        value: 0n,
        gas: 21_000n,
        maxFeePerGas: sent.maxFeePerGas! * 2n,
        maxPriorityFeePerGas: sent.maxFeePerGas! * 2n,
      });
      await h.anvil.rpc("eth_sendRawTransaction", [foreign]);
      return reference;
    });
    const orphaned = await until(async () => {
      const send = await h.sendOf("WITHDRAWAL", reference);
      if (send?.status !== "ORPHANED") await h.anvil.mine(1);
      return send?.status === "ORPHANED" ? send : undefined;
    }, "the send ORPHANED");
    expect(orphaned.transactionHash).not.toBeNull();
    expect(await h.anvil.client.getTransactionReceipt({ hash: orphaned.transactionHash! }).catch(() => undefined)).toBeUndefined();
    expect(await h.metric("chain_sends_orphaned_total")).toBe(1);
    expect(h.logLines("send orphaned: another transaction took its nonce; the operator decides")).toMatchObject([{ level: 50, purposeId: reference }]);
    await until(async () => (await h.metric("chain_sends_orphaned")) === 1, "chain_sends_orphaned 1");
    expect(await h.token.transfersTo(to)).toEqual([]);
    expect((await h.withdrawal(reference)).status).toBe("PROCESSING");
  });
});

describe("the fee ceiling", () => {
  const CEILING_GWEI = "4";

  beforeAll(async () => {
    await h.restart({ CHAIN_REPLACE_AFTER_MS: "100", CHAIN_MAX_FEE_GWEI_BASE: CEILING_GWEI });
  }, patient(60_000));

  it("a send stuck in the mempool is replaced until the next bump would pass CHAIN_MAX_FEE_GWEI_<NETWORK>, then waits; no transaction ever bids above it", async () => {
    const ceiling = parseGwei(CEILING_GWEI);
    const userId = await h.fundedUser("10");
    const to = freshAddress();
    const passes = () => h.metric("chain_sender_passes_total", { leading: "true" }).then((value) => value ?? 0);
    await h.anvil.rpc("evm_setAutomine", [false]);
    let reference: string;
    try {
      reference = await h.withdraw(userId, 1, to);
      await until(async () => (await h.metric("chain_sends_fee_ceiling_total")) === 1, "the fee ceiling reached", 30_000);
      const attempts = async () => (await h.server.app.db.prisma.chainSendAttempt.findMany({ where: { send: { purposeId: reference } }, orderBy: { createdAt: "asc" } })).map((a) => parseTransaction(a.rawTransaction as Hex));
      const signed = await attempts();
      // Twenty more passes, each past the replacement time: not one more replacement.
      const from = await passes();
      await until(async () => (await passes()) >= from + 20, "twenty more sender passes");
      expect(await attempts()).toHaveLength(signed.length);

      expect(signed.length).toBeGreaterThan(2);
      for (const tx of signed) expect(tx.maxFeePerGas!).toBeLessThanOrEqual(ceiling);
      for (const [i, tx] of signed.slice(1).entries()) expect(tx.maxFeePerGas! * 100n).toBeGreaterThanOrEqual(signed[i].maxFeePerGas! * 110n);
      expect(signed.map((tx) => tx.nonce)).toEqual(signed.map(() => signed[0].nonce));
      // The node holds the last one, at the ceiling's side of it.
      const onNode = await h.anvil.client.getTransaction({ hash: (await h.withdrawal(reference)).transactionHash as Hash });
      expect(onNode.maxFeePerGas!).toBeLessThanOrEqual(ceiling);
      expect(h.logLines("send not mined and at the fee ceiling: no replacement above CHAIN_MAX_FEE_GWEI; it waits for fees to fall")).toHaveLength(1);
    } finally {
      await h.anvil.rpc("evm_setAutomine", [true]);
    }
    const [done] = await h.mineUntil([reference], "COMPLETED");
    const mined = await h.anvil.client.getTransaction({ hash: done.transactionHash as Hash });
    expect(mined.maxFeePerGas!).toBeLessThanOrEqual(ceiling);
    await oneTransferEach([{ to, amount: "1" }]);
  });
});
