import { describe, expect, it } from "vitest";
import { BaseError, ExecutionRevertedError, parseTransaction, recoverTransactionAddress, type Address } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { feeCeilingOf, gasLimitFor } from "../src/chain/send-fees.js";
import { bumpedFees, cappedFees, InexactAmount, isAlreadyIn, isRevert, replacementFees, signTransfer, transferCall } from "../src/chain/transactions.js";

// The sender's pure rules: how a send becomes a call, how a replacement is priced, what a node's answer means.
const TOKEN: Address = "0x1111111111111111111111111111111111111111";
const TO: Address = "0x2222222222222222222222222222222222222222";

describe("a send as a call", () => {
  it("a token amount becomes transfer(to, base units) of that token; native coin is value in wei", () => {
    const token = transferCall({ tokenAddress: TOKEN, toAddress: TO, amount: "12.345678" }, 6);
    expect(token).toMatchObject({ to: TOKEN, value: 0n, units: 12_345_678n });
    expect(token.data?.slice(0, 10)).toBe("0xa9059cbb");
    expect(transferCall({ tokenAddress: null, toAddress: TO, amount: "0.000000000000000001" }, 18)).toEqual({ to: TO, value: 1n, units: 1n });
    expect(transferCall({ tokenAddress: TOKEN, toAddress: TO, amount: "1.500000000000000000" }, 6).units).toBe(1_500_000n);
  });

  it("an amount with more decimals than the token is refused, never rounded", () => {
    expect(() => transferCall({ tokenAddress: TOKEN, toAddress: TO, amount: "1.0000001" }, 6)).toThrow(InexactAmount);
  });

  it("a signed transfer is EIP-1559 at the given nonce and chain, signed by the account, and its hash is known before any broadcast", async () => {
    const account = privateKeyToAccount(`0x${"11".repeat(32)}`);
    const call = transferCall({ tokenAddress: TOKEN, toAddress: TO, amount: "1" }, 6);
    const signed = await signTransfer(account, 31337, 7n, call, 60_000n, { maxFeePerGas: 30n, maxPriorityFeePerGas: 2n });
    const parsed = parseTransaction(signed.raw);
    expect(parsed).toMatchObject({ type: "eip1559", chainId: 31337, nonce: 7, to: TOKEN, gas: 60_000n, maxFeePerGas: 30n, maxPriorityFeePerGas: 2n });
    expect(await recoverTransactionAddress({ serializedTransaction: signed.raw as never })).toBe(account.address);
    expect(signed.hash).toMatch(/^0x[0-9a-f]{64}$/);
  });
});

describe("a replacement's fees", () => {
  it("outbid the replaced transaction by at least 12.5% on both fees, or follow the node's current fees when higher", () => {
    expect(bumpedFees({ maxFeePerGas: 800n, maxPriorityFeePerGas: 80n }, { maxFeePerGas: 100n, maxPriorityFeePerGas: 10n })).toEqual({ maxFeePerGas: 901n, maxPriorityFeePerGas: 91n });
    expect(bumpedFees({ maxFeePerGas: 800n, maxPriorityFeePerGas: 80n }, { maxFeePerGas: 5000n, maxPriorityFeePerGas: 300n })).toEqual({ maxFeePerGas: 5000n, maxPriorityFeePerGas: 300n });
  });
});

describe("the fee ceiling", () => {
  const previous = { maxFeePerGas: 800n, maxPriorityFeePerGas: 80n };
  const quiet = { maxFeePerGas: 100n, maxPriorityFeePerGas: 10n };
  const busy = { maxFeePerGas: 5000n, maxPriorityFeePerGas: 300n };

  it.each([
    ["far below it: the usual bump", quiet, 10_000n, { maxFeePerGas: 901n, maxPriorityFeePerGas: 91n }],
    ["the node asking more than it: held to it", busy, 950n, { maxFeePerGas: 950n, maxPriorityFeePerGas: 300n }],
    ["at exactly the smallest bump", quiet, 901n, { maxFeePerGas: 901n, maxPriorityFeePerGas: 91n }],
    ["the smallest bump passing it: none", quiet, 900n, undefined],
  ])("a replacement, %s", (_case, current, ceiling, expected) => {
    expect(replacementFees(previous, current, ceiling)).toEqual(expected);
  });

  it("a first signing bids the node's fees held to the ceiling, its tip never above its fee", () => {
    expect(cappedFees({ maxFeePerGas: 100n, maxPriorityFeePerGas: 10n }, 1000n)).toEqual({ maxFeePerGas: 100n, maxPriorityFeePerGas: 10n });
    expect(cappedFees({ maxFeePerGas: 100n, maxPriorityFeePerGas: 90n }, 50n)).toEqual({ maxFeePerGas: 50n, maxPriorityFeePerGas: 50n });
  });

  it("sweeps and their gas bid at most a tenth of the network's ceiling; a sweep's gas limit is the estimate itself", () => {
    expect([feeCeilingOf("SWEEP", 1000n), feeCeilingOf("GAS", 1000n), feeCeilingOf("WITHDRAWAL", 1000n), feeCeilingOf("FORWARD", 1000n)]).toEqual([100n, 100n, 1000n, 1000n]);
    expect([gasLimitFor("SWEEP", 50_000n), gasLimitFor("WITHDRAWAL", 50_000n)]).toEqual([50_000n, 60_000n]);
  });
});

describe("what a node's answer means", () => {
  it("an execution revert is the token refusing; a node that failed to answer is not", () => {
    expect(isRevert(new BaseError("estimate failed", { cause: new ExecutionRevertedError({ message: "execution reverted: paused" }) }))).toBe(true);
    expect(isRevert(new BaseError("HTTP request failed", { details: "fetch failed" }))).toBe(false);
    expect(isRevert(new Error("execution reverted"))).toBe(false);
  });

  it("a broadcast refused as already known or with a used nonce needs nothing more; other refusals are retried", () => {
    expect(isAlreadyIn(new BaseError("x", { details: "transaction already imported" }))).toBe(true);
    expect(isAlreadyIn(new BaseError("x", { details: "nonce too low" }))).toBe(true);
    expect(isAlreadyIn(new BaseError("x", { details: "insufficient funds for gas * price + value" }))).toBe(false);
  });
});
