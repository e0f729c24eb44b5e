import {
  BaseError,
  encodeFunctionData,
  erc20Abi,
  ExecutionRevertedError,
  keccak256,
  parseUnits,
  type Address,
  type Hex,
  type LocalAccount,
} from "viem";
import type { ChainSend, SignedTransaction } from "./send-records.js";

/** What a send asks of the chain: a token's `transfer(to, units)`, or native coin to `to`. */
export type TransferCall = { to: Address; data?: Hex; value: bigint; units: bigint };

/** An amount with more decimals than its token has cannot be sent exactly: refused, never rounded. */
export class InexactAmount extends Error {}

/** An amount in whole units as the token's base units (`decimals`; 18 for native coin), exactly. */
export function baseUnits(amount: string, decimals: number): bigint {
  const [, fraction = ""] = amount.split(".");
  if (fraction.replace(/0+$/, "").length > decimals) throw new InexactAmount(`${amount} has more than the token's ${decimals} decimals`);
  return parseUnits(amount, decimals);
}

/** The call that carries `send`, its amount in the token's base units (`decimals`; 18 for native coin). */
export function transferCall(send: Pick<ChainSend, "tokenAddress" | "toAddress" | "amount">, decimals: number): TransferCall {
  const units = baseUnits(send.amount, decimals);
  if (send.tokenAddress === null) return { to: send.toAddress, value: units, units };
  return { to: send.tokenAddress, data: encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [send.toAddress, units] }), value: 0n, units };
}

export type Fees = { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint };

/** An EIP-1559 transaction at `nonce`, signed in memory; its hash is known before anything is broadcast. */
export async function signTransfer(account: LocalAccount, chainId: number, nonce: bigint, call: TransferCall, gasLimit: bigint, fees: Fees): Promise<SignedTransaction> {
  const raw = await account.signTransaction({
    type: "eip1559",
    chainId,
    nonce: Number(nonce),
    to: call.to,
    data: call.data,
    value: call.value,
    gas: gasLimit,
    maxFeePerGas: fees.maxFeePerGas,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
  });
  return { hash: keccak256(raw), raw, gasLimit, ...fees };
}

const bump = (value: bigint) => (value * 9n) / 8n + 1n;
const min = (a: bigint, b: bigint) => (a < b ? a : b);

/** A replacement must outbid the transaction it replaces by at least 10% on both fees (nodes refuse less); 12.5% here. */
export function bumpedFees(previous: Fees, current: Fees): Fees {
  const maxPriorityFeePerGas = [bump(previous.maxPriorityFeePerGas), current.maxPriorityFeePerGas].reduce((a, b) => (a > b ? a : b));
  const maxFeePerGas = [bump(previous.maxFeePerGas), current.maxFeePerGas, maxPriorityFeePerGas].reduce((a, b) => (a > b ? a : b));
  return { maxFeePerGas, maxPriorityFeePerGas };
}

/** Fees held to the network's ceiling (CHAIN_MAX_FEE_GWEI_<NETWORK>): a transaction above what the node asks waits for fees to fall. */
export function cappedFees(fees: Fees, ceiling: bigint): Fees {
  const maxFeePerGas = min(fees.maxFeePerGas, ceiling);
  return { maxFeePerGas, maxPriorityFeePerGas: min(fees.maxPriorityFeePerGas, maxFeePerGas) };
}

/**
 * The fees of a replacement (bumped, at most the ceiling), or undefined when even the smallest bump nodes accept
 * would pass the ceiling: no replacement is signed above it, and the send waits at the fees it has.
 */
export function replacementFees(previous: Fees, current: Fees, ceiling: bigint): Fees | undefined {
  if (bump(previous.maxFeePerGas) > ceiling) return undefined;
  return cappedFees(bumpedFees(previous, current), ceiling);
}

/** Gas estimated, plus a fifth: the state may change a little between estimate and mining. */
export const withMargin = (estimate: bigint) => (estimate * 6n) / 5n;

/** The node ran the call and it reverted (the token refused the transfer): as opposed to a node that failed to answer. */
export function isRevert(err: unknown): boolean {
  if (!(err instanceof BaseError)) return false;
  return err.walk((cause) => cause instanceof ExecutionRevertedError) !== null || /revert/i.test(err.details ?? "");
}

/** A broadcast the node refused because it has the transaction already, or its nonce is used (by it, mined): nothing to do. */
export function isAlreadyIn(err: unknown): boolean {
  const text = err instanceof BaseError ? `${err.details ?? ""} ${err.shortMessage}` : String(err);
  return /already known|already imported|known transaction|nonce too low|nonce has already been used/i.test(text);
}

/** One line of an error, for logs and failure reasons (viem's messages run over many lines). */
export function shortError(err: unknown): string {
  if (err instanceof BaseError) return (err.details || err.shortMessage).split("\n")[0].slice(0, 300);
  return (err instanceof Error ? err.message : String(err)).split("\n")[0].slice(0, 300);
}
