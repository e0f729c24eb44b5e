import type { Address } from "viem";
import type { Mode } from "../modes.js";
import type { Sql } from "../db/sql.js";
import { badInput } from "../errors.js";
import type { LiveNetworks } from "./live.js";
import { queueSend } from "./send-records.js";

/** A transfer of a user's money out of the treasury: a withdrawal, or the forward of a converted deposit. */
export type OutgoingTransfer = {
  /** The mode of the money moved: it leaves only on that mode's chain, from that mode's treasury. */
  mode: Mode;
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
 * and the send commit together), sent by the network's sender. A simulated network (test mode
 * only) queues nothing; live mode never gets that far with one (assertUsable refuses it first).
 */
export class SendQueue {
  constructor(private readonly deps: { networks: LiveNetworks; treasury: Record<Mode, Address>; onQueued: () => void }) {}

  isOnChain(mode: Mode, network: string): boolean {
    return this.deps.networks.isOnChain(mode, network);
  }

  /** Queues the transfer when its network is on a chain in its mode (true); false on a simulated network, where nothing is sent. */
  async queue(tx: Sql, transfer: OutgoingTransfer): Promise<boolean> {
    const { networks } = this.deps;
    const { mode } = transfer;
    if (!networks.isOnChain(mode, transfer.network)) {
      // Never reached through the services (assertUsable first): the last guard that no live money is simulated away.
      if (mode === "live") throw badInput(`${transfer.network} is not live on this server: live mode moves money on live networks only`);
      return false;
    }
    const token = networks.tokenOf(mode, transfer.network, transfer.symbol);
    if (!token) throw badInput(`${transfer.symbol} has no contract configured on ${transfer.network} in ${mode} mode`);
    const chainId = networks.chainIdOf(mode, transfer.network);
    if (chainId === undefined) throw badInput(`${transfer.network} is on a chain and its RPC has not reported its chain id yet; retry shortly`);
    await queueSend(tx, { chainId, network: transfer.network, purpose: transfer.purpose, purposeId: transfer.purposeId, from: this.deps.treasury[mode], to: transfer.to, token, amount: transfer.amount });
    return true;
  }

  /** After the queueing transaction committed: the sender on this instance looks at once (others at their next poll). */
  nudge() {
    this.deps.onQueued();
  }
}
