import type { Deposit } from "../generated/prisma/client.js";

/**
 * The deposits this process committed most recently, each as committed, so that the subscription
 * payload of a change made here needs no read. Bounded: the oldest entry goes first.
 */
export class RecentDeposits {
  private readonly rows = new Map<string, Deposit>();

  constructor(private readonly capacity = 5000) {}

  /** Call after the commit: only committed rows are ever handed out. */
  remember(deposit: Deposit) {
    this.rows.delete(deposit.id);
    this.rows.set(deposit.id, deposit);
    if (this.rows.size > this.capacity) this.rows.delete(this.rows.keys().next().value!);
  }

  /** The client's deposit as this process committed it in `status`; undefined when it did not (or no longer remembers). */
  inStatus(clientId: string, id: string, status: string): Deposit | undefined {
    const deposit = this.rows.get(id);
    return deposit?.clientId === clientId && deposit.status === status ? deposit : undefined;
  }
}
