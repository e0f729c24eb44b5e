import type { Address } from "viem";
import type { Sql } from "../db/sql.js";
import { badInput } from "../errors.js";
import type { LiveNetworks } from "./live.js";
import { queueSend } from "./send-records.js";

/** A transfer of a user's money out of the treasury: a withdrawal, or the forward of a converted deposit. */
export type OutgoingTransfer = {
  network: string;
  purpose: "WITHDRAWAL" | "FORWARD";
  /** The withdrawal's reference, or the deposit's id: one transfer each, ever. */
  purposeId: string;
  to: Address;
  symbol: string;
  /** Whole token units, exact. */
  amount: string;
};

/**
 * Where the money rooms hand a transfer to the chain: queued in their own transaction (so the debit
 * and the send commit together), sent by the network's sender. A sandbox network queues nothing.
 */
export class SendQueue {
  constructor(private readonly deps: { networks: LiveNetworks; treasury: Address; onQueued: () => void }) {}

  isLive(network: string): boolean {
    return this.deps.networks.isLive(network);
  }

  /** Queues the transfer when its network is live (true); false on a sandbox network, where nothing is sent. */
  async queue(tx: Sql, transfer: OutgoingTransfer): Promise<boolean> {
    const { networks } = this.deps;
    if (!networks.isLive(transfer.network)) return false;
    const token = networks.tokenOf(transfer.network, transfer.symbol);
    if (!token) throw badInput(`${transfer.symbol} has no contract configured on ${transfer.network} (CHAIN_TOKEN_${transfer.network}_${transfer.symbol})`);
    const chainId = networks.chainIdOf(transfer.network);
    if (chainId === undefined) throw badInput(`${transfer.network} is live and its RPC has not reported its chain id yet; retry shortly`);
    await queueSend(tx, { chainId, network: transfer.network, purpose: transfer.purpose, purposeId: transfer.purposeId, from: this.deps.treasury, to: transfer.to, token, amount: transfer.amount });
    return true;
  }

  /** After the queueing transaction committed: the sender on this instance looks at once (others at their next poll). */
  nudge() {
    this.deps.onQueued();
  }
}
