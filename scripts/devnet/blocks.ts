import type { NodeConnection } from "./node.js";

/**
 * anvil mines each transaction at once, in a block of its own, and nothing else. So that a deposit or a
 * withdrawal reaches its confirmation depth without mining by hand, this mines one empty block every
 * `intervalMs` while the newest block holding a transaction is less than `confirmations` deep. An idle
 * chain stands still: its saved state does not grow. Returns a function that stops it.
 */
export function mineWhileWaiting(node: NodeConnection, options: { confirmations: number; intervalMs: number }): () => Promise<void> {
  let stopped = false;
  let checked: bigint | undefined;
  let newestBusy: bigint | undefined;
  const tick = async () => {
    const head = await node.client.getBlockNumber();
    // The first look goes back just far enough to find a transaction still short of its depth.
    const from = checked === undefined ? (head > BigInt(options.confirmations) ? head - BigInt(options.confirmations) : 0n) : checked + 1n;
    for (let number = from; number <= head; number++) {
      const count = await node.client.getBlockTransactionCount({ blockNumber: number });
      if (count > 0) newestBusy = number;
    }
    checked = head;
    if (newestBusy !== undefined && head - newestBusy + 1n < BigInt(options.confirmations)) await node.test.mine({ blocks: 1 });
  };
  const loop = (async () => {
    while (!stopped) {
      // A node that does not answer for a moment (stopping, busy) is asked again at the next tick.
      await tick().catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, options.intervalMs));
    }
  })();
  return async () => {
    stopped = true;
    await loop;
  };
}
