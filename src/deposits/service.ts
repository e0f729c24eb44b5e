import { randomUUID } from "node:crypto";
import { modeOf } from "../modes.js";
import type { Deposit, Prisma, PrismaClient } from "../generated/prisma/client.js";
import type { Sql } from "../db/sql.js";
import { AppError, notFound } from "../errors.js";
import type { BusinessMetrics } from "../metrics/metrics.js";
import { recordEvent } from "../events/log.js";
import { depositObject } from "./representation.js";
import type { EventType } from "../events/types.js";
import type { Events } from "../pubsub/events.js";
import { requireUuid } from "../validation.js";
import { RecentDeposits } from "./recent.js";
import { depositById, depositExists, dueDeposits, insertDeposit, moveDeposit } from "./records.js";
import type { DepositSettlement } from "./settlement.js";
import { DEPOSIT_STATUS, type IncomingDeposit } from "../ledger/deposit-types.js";

type Deps = {
  prisma: PrismaClient;
  sql: Sql;
  settlement: DepositSettlement;
  events: Events;
  metrics: Pick<BusinessMetrics, "deposits">;
  /** Sandbox: a received deposit completes by itself after this long (null: only a provider event completes it). */
  autoSettleAfterMs: number | null;
};

/**
 * Deposit records and their lifecycle PENDING → COMPLETED | FAILED. Writers work inside the caller's
 * transaction (the webhook that caused the change commits with it) and return what changed, which
 * the caller announces once committed.
 */
export class DepositService {
  private readonly recent = new RecentDeposits();

  constructor(private readonly deps: Deps) {}

  /** Records a PENDING deposit; null when the provider's reference is already known (nothing changes). */
  async receive(tx: Sql, incoming: IncomingDeposit): Promise<Deposit | null> {
    const { autoSettleAfterMs } = this.deps;
    // The sandbox's settle timer plays the provider in test mode only: a live deposit waits for its provider (or chain).
    const simulated = !incoming.live && (await modeOf(tx, incoming.clientId)) === "test";
    const settleAt = autoSettleAfterMs === null || !simulated ? null : new Date(Date.now() + autoSettleAfterMs);
    const deposit = await insertDeposit(tx, randomUUID(), incoming, DEPOSIT_STATUS.PENDING, settleAt);
    if (!deposit) return null;
    await recordDepositEvent(tx, "deposit.created", deposit);
    return deposit;
  }

  /**
   * PENDING → COMPLETED with its ledger journals, in the caller's transaction. The conditional update
   * makes one completion win however many race (the loser waits on the row, then finds it settled);
   * null when the deposit was not PENDING (a second completion changes nothing).
   */
  async complete(tx: Sql, provider: string, reference: string): Promise<Deposit | null> {
    const moved = await this.transition(tx, provider, reference, { status: DEPOSIT_STATUS.COMPLETED });
    if (!moved) return null;
    await this.deps.settlement.settle(tx, moved.deposit, moved.destination);
    return moved.deposit;
  }

  /** PENDING → FAILED; no money moved, so none moves back. Null when it was not PENDING. */
  async fail(tx: Sql, provider: string, reference: string, reason: string): Promise<Deposit | null> {
    const moved = await this.transition(tx, provider, reference, { status: DEPOSIT_STATUS.FAILED, failureReason: reason });
    return moved?.deposit ?? null;
  }

  /** Tells subscribers (on every instance) and the metrics about deposits that changed; call after the commit. */
  announce(deposits: Deposit[]) {
    for (const deposit of deposits) {
      this.recent.remember(deposit);
      this.deps.metrics.deposits.inc({ status: deposit.status });
      this.deps.events.publish("deposit", { clientId: deposit.clientId, userId: deposit.userId, depositId: deposit.id, status: deposit.status });
    }
  }

  /** `query` carries GraphQL's nested selection; without one the row is read by a prepared statement. */
  async get(clientId: string, id: unknown, query: Pick<Prisma.DepositFindFirstArgs, "select" | "include"> = {}) {
    const depositId = requireUuid(id, "id");
    const deposit =
      Object.keys(query).length === 0
        ? await depositById(this.deps.sql, clientId, depositId)
        : await this.deps.prisma.deposit.findFirst({ ...query, where: { id: depositId, clientId } });
    if (!deposit) throw notFound("Deposit");
    return deposit;
  }

  /**
   * The client's deposit for the payload of a log event that reports it in `status`: as this process
   * committed it when it did (no read), else as `get` reads it (`query` carries GraphQL's selection).
   */
  forEvent(clientId: string, id: string, status: string, query: Pick<Prisma.DepositFindFirstArgs, "select" | "include">) {
    const committedHere = Object.keys(query).length === 0 ? this.recent.inStatus(clientId, id, status) : undefined;
    return committedHere ?? this.get(clientId, id, query);
  }

  /** The client's deposit while it is PENDING; a settled one (either way) is a CONFLICT, as settling it again is not a transition. */
  async getPending(clientId: string, id: unknown, settling: DepositSettling) {
    const deposit = await this.get(clientId, id);
    if (deposit.status !== DEPOSIT_STATUS.PENDING) throw notPending(deposit.status, settling);
    return deposit;
  }

  /** Deposits whose sandbox settle time has come, oldest first (every instance may see the same ones). */
  dueForSettlement(now: Date, take: number) {
    return dueDeposits(this.deps.sql, DEPOSIT_STATUS.PENDING, now, take);
  }

  /** Gives a deposit whose settlement failed another try later (in its own short write). */
  postponeSettlement(id: string, delayMs: number) {
    return this.deps.prisma.deposit.updateMany({
      where: { id, status: DEPOSIT_STATUS.PENDING },
      data: { settleAt: new Date(Date.now() + delayMs) },
    });
  }

  /** One statement when the deposit is PENDING (the money path); a second only to tell "unknown" from "already settled". */
  private async transition(tx: Sql, provider: string, reference: string, change: { status: string; failureReason?: string }) {
    const moved = await moveDeposit(tx, provider, reference, DEPOSIT_STATUS.PENDING, change);
    if (!moved) {
      if (!(await depositExists(tx, provider, reference))) throw notFound("Deposit");
      return null;
    }
    await recordDepositEvent(tx, change.status === DEPOSIT_STATUS.COMPLETED ? "deposit.completed" : "deposit.failed", moved.deposit);
    return moved;
  }
}

/** What settling a deposit does to it, as a refusal names it. */
export type DepositSettling = "completed" | "failed";

/** Only a PENDING deposit settles: 409, whatever it is now (a repeat of the same settlement included). */
export const notPending = (status: string, settling: DepositSettling) =>
  new AppError("CONFLICT", `Deposit is ${status}: only a PENDING deposit can be ${settling}`);

function recordDepositEvent(tx: Sql, type: EventType, deposit: Deposit) {
  return recordEvent(tx, { clientId: deposit.clientId, userId: deposit.userId, type, object: depositObject(deposit) });
}
