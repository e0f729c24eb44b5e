import type { Address, Hash } from "viem";

/** A Transfer log as the watcher reads it. */
export type TransferLog = { address: Address; transactionHash: Hash; logIndex: number; args: { from?: Address; to?: Address; value?: bigint } };

/**
 * What each transfer is, whatever its block or log index: `token:from:to:value#ordinal`, the ordinal
 * counting the identical transfers before it in its transaction. A transaction mined again (after a
 * reorg, in another block or behind other transactions) carries the same transfers in the same order,
 * so each keeps its key while its log index may change. `logs` must hold every Transfer of the
 * configured tokens of their transactions (one eth_getLogs of a range does: a transaction lies in one block).
 */
export function transferKeys<T extends TransferLog>(logs: T[]): Map<T, string> {
  const ordered = [...logs].sort((a, b) => (a.transactionHash === b.transactionHash ? a.logIndex - b.logIndex : a.transactionHash < b.transactionHash ? -1 : 1));
  const seen = new Map<string, number>();
  const keys = new Map<T, string>();
  for (const log of ordered) {
    const content = [log.address, log.args.from ?? "", log.args.to ?? "", log.args.value ?? 0n].map((part) => part.toString().toLowerCase()).join(":");
    const sameBefore = seen.get(`${log.transactionHash}/${content}`) ?? 0;
    seen.set(`${log.transactionHash}/${content}`, sameBefore + 1);
    keys.set(log, `${content}#${sameBefore}`);
  }
  return keys;
}
