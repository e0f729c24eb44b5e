import type { SqlDatabase } from "../db/sql.js";
import { isNumericOverflow } from "../db/errors.js";
import type { Deposit } from "../generated/prisma/client.js";
import type { DepositService } from "../deposits/service.js";
import type { Logger } from "../logger.js";
import type { ChainMetrics } from "../metrics/chain.js";
import type { NetworkSettings } from "../chain/networks.js";
import { dueDeposits, flagDeposits, settleTracked, type Cursor, type OpenDeposit } from "../chain/records.js";

/** Deposits completed or failed per batch of one pass. */
const SETTLE_BATCH = 200;

const LEFT_THE_CHAIN = "The transfer's block left the canonical chain (reorg) and the transfer was not mined again";
const TOO_LARGE = "The amount is more than the ledger can hold: not credited (the tokens stay at the deposit address for the operator to settle by hand)";

type Deps = {
  network: Pick<NetworkSettings, "name" | "confirmations">;
  sql: SqlDatabase;
  deposits: Pick<DepositService, "complete" | "fail" | "announce">;
  metrics: ChainMetrics;
  log: Logger;
  halted(): boolean;
};

/**
 * The watcher's settlement of its due deposits: those whose block is `confirmations` deep below the
 * synced block complete (credited once); detached ones whose depth has passed without the transfer
 * coming back fail (never credited). Each in its own transaction, which first closes the chain row
 * only if it is still in the state it was chosen in (a rewind may have come between).
 *
 * One deposit's failure never holds up the others: a settlement the ledger refuses for good (an
 * amount its numeric type cannot hold) fails that deposit with the reason and flags it UNSETTLEABLE;
 * any other error leaves it PENDING for the next pass, logged once, while the rest go on.
 */
export class DueSettlement {
  /** Deposits whose settlement threw in this process (logged once each; retried every pass). */
  private readonly stuck = new Set<string>();

  constructor(private readonly deps: Deps) {}

  async settle(chainId: number, synced: Cursor) {
    const deepest = synced.blockNumber - BigInt(this.deps.network.confirmations) + 1n;
    for (const detached of [false, true]) {
      const passed = new Set<string>();
      for (;;) {
        const due = (await dueDeposits(this.deps.sql, chainId, deepest, detached, SETTLE_BATCH + passed.size)).filter((deposit) => !passed.has(deposit.depositId));
        const settled: Deposit[] = [];
        for (const deposit of due) {
          const changed = await this.settleOne(deposit, deepest, detached);
          if (changed === undefined) passed.add(deposit.depositId);
          else if (changed) settled.push(changed);
        }
        this.announce(settled);
        if (due.length < SETTLE_BATCH || this.deps.halted()) break;
      }
    }
  }

  /** The deposit settled (null: already settled elsewhere, or no longer in its chosen state); undefined when it could not be, this pass. */
  private async settleOne(deposit: OpenDeposit, deepest: bigint, detached: boolean): Promise<Deposit | null | undefined> {
    const { sql, deposits } = this.deps;
    try {
      const changed = await sql.transaction(async (tx) => {
        if (!(await settleTracked(tx, deposit.depositId, deepest, detached, detached ? "FAILED" : "COMPLETED"))) return null;
        return detached ? deposits.fail(tx, deposit.provider, deposit.eventId, LEFT_THE_CHAIN) : deposits.complete(tx, deposit.provider, deposit.eventId);
      });
      this.stuck.delete(deposit.depositId);
      return changed;
    } catch (err) {
      if (!detached && isNumericOverflow(err)) return this.refuse(deposit, deepest);
      this.deps.metrics.settlementErrors.inc({ network: this.deps.network.name });
      if (!this.stuck.has(deposit.depositId)) this.deps.log.error({ err, depositId: deposit.depositId, eventId: deposit.eventId }, "deposit settlement failed; the others go on, it is tried again next pass");
      this.stuck.add(deposit.depositId);
      return undefined;
    }
  }

  /** A deposit the ledger cannot hold: FAILED with the reason, and flagged for the operator. */
  private async refuse(deposit: OpenDeposit, deepest: bigint): Promise<Deposit | null> {
    const failed = await this.deps.sql.transaction(async (tx) => {
      if (!(await settleTracked(tx, deposit.depositId, deepest, false, "FAILED"))) return null;
      await flagDeposits(tx, [deposit.depositId], "UNSETTLEABLE");
      return this.deps.deposits.fail(tx, deposit.provider, deposit.eventId, TOO_LARGE);
    });
    if (failed) this.deps.log.error({ depositId: deposit.depositId, eventId: deposit.eventId, amount: failed.amount.toFixed() }, "deposit too large for the ledger: FAILED and flagged UNSETTLEABLE");
    return failed;
  }

  private announce(settled: Deposit[]) {
    if (settled.length === 0) return;
    this.deps.deposits.announce(settled);
    const completed = settled.filter((deposit) => deposit.status === "COMPLETED").length;
    const network = this.deps.network.name;
    if (completed > 0) this.deps.metrics.depositsCredited.inc({ network }, completed);
    if (settled.length > completed) this.deps.metrics.depositsFailed.inc({ network }, settled.length - completed);
  }
}
