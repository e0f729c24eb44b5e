import { randomBytes } from "node:crypto";
import type { Decimal } from "decimal.js";
import { getAddress } from "viem";
import type { Prisma, PrismaClient, User, Withdrawal } from "../generated/prisma/client.js";
import { inTransaction, type Tx } from "../db/transaction.js";
import { prismaSql } from "../db/sql.js";
import { recordEvent } from "../events/log.js";
import { eventObject } from "../events/objects.js";
import { AppError, badInput, notFound } from "../errors.js";
import { Exact, parseAmount } from "../ledger/amount.js";
import { newMetadata, type MetadataChanges } from "../metadata.js";
import type { LedgerService } from "../ledger/service.js";
import type { BusinessMetrics } from "../metrics/metrics.js";
import type { Currency } from "../providers/fx.js";
import type { UserService } from "../users/service.js";
import { parseBankCurrency, parseBankWithdrawal, parseNgnWithdrawal, parseUsdcWithdrawal } from "./validation.js";

/**
 * PENDING at initiation (the money is already debited). A real payout provider would move it to
 * PROCESSING when it accepts the payout; the sandbox has no such step, so its complete and fail
 * helpers accept either open status.
 */
export const WITHDRAWAL_STATUS = { PENDING: "PENDING", PROCESSING: "PROCESSING", COMPLETED: "COMPLETED", FAILED: "FAILED" } as const;
export type WithdrawalStatus = keyof typeof WITHDRAWAL_STATUS;
export const WITHDRAWAL_STATUSES = Object.values(WITHDRAWAL_STATUS);
const OPEN = [WITHDRAWAL_STATUS.PENDING, WITHDRAWAL_STATUS.PROCESSING];

export const WITHDRAWAL_TYPES = ["BANK", "NGN_BANK", "USDC"] as const;
export type WithdrawalType = (typeof WITHDRAWAL_TYPES)[number];
type Selection = Pick<Prisma.WithdrawalFindFirstArgs, "select" | "include">;
type Payout = {
  clientId: string;
  userId: string;
  type: WithdrawalType;
  currency: Currency;
  amount: Decimal;
  destination: Record<string, unknown>;
  metadata: MetadataChanges;
};

/** No fee is charged on withdrawals: the amount is debited in full and paid out in full. */
const FEE = "0";

const newReference = () => `wd_${randomBytes(12).toString("hex")}`;
const REFERENCE = /^wd_[0-9a-f]{24}$/;

/** A reference that cannot be one of ours is refused as such (400), before any lookup. */
function checkReference(reference: string): string {
  if (!REFERENCE.test(reference)) throw badInput("reference must be a withdrawal reference: wd_ and 24 hex digits");
  return reference;
}

const sameName = (given: string, actual: string) => given.localeCompare(actual.trim(), undefined, { sensitivity: "accent" }) === 0;

/**
 * Withdrawals: the balance in the withdrawal's own currency is debited (user against PAYOUTS) at
 * initiation, in the same transaction as the record; a failure reverses it exactly once.
 * Ledger entries carry the withdrawal's `reference` as their referenceId.
 */
export class WithdrawalService {
  constructor(
    private readonly deps: { prisma: PrismaClient; users: UserService; ledger: LedgerService; metrics: Pick<BusinessMetrics, "withdrawals"> },
  ) {}

  /** USD, EUR, MXN or BRL to the user's own bank account (BRL: or Pix key): names and dob must be the user's. */
  async toBank(clientId: string, currencyInput: unknown, input: unknown) {
    const currency = parseBankCurrency(currencyInput);
    const request = parseBankWithdrawal(currency, input);
    const amount = parseAmount(request.amount, currency);
    const user = await this.deps.users.get(clientId, request.userId);
    assertAccountHolder(user, request);
    const destination = { currency, ...request.destination };
    return this.initiate({ clientId, userId: user.id, type: "BANK", currency, amount, destination, metadata: request.metadata });
  }

  async toNgnBank(clientId: string, input: unknown) {
    const request = parseNgnWithdrawal(input);
    const amount = parseAmount(request.amount, "NGN");
    const user = await this.deps.users.get(clientId, request.userId, { select: { id: true } });
    const { accountNumber: account, bankCode, accountName, bankName, narration } = request;
    const destination = { account, bankCode, accountName, bankName, narration };
    return this.initiate({ clientId, userId: user.id, type: "NGN_BANK", currency: "NGN", amount, destination, metadata: request.metadata });
  }

  async toUsdc(clientId: string, input: unknown) {
    const request = parseUsdcWithdrawal(input);
    const amount = parseAmount(request.amount, "USDC");
    const user = await this.deps.users.get(clientId, request.userId, { select: { id: true } });
    const destination = { address: getAddress(request.walletAddress), network: request.network.name, chainId: request.network.chainId };
    return this.initiate({ clientId, userId: user.id, type: "USDC", currency: "USDC", amount, destination, metadata: request.metadata });
  }

  /** Another client's withdrawal is exactly as unknown as one that does not exist. */
  async get(clientId: string, reference: string, query: Selection = {}) {
    const withdrawal = await this.deps.prisma.withdrawal.findFirst({ ...query, where: { reference: checkReference(reference), clientId } });
    if (!withdrawal) throw notFound("Withdrawal");
    return withdrawal;
  }

  /** The payout arrived: an open withdrawal becomes COMPLETED (a completed one is returned unchanged). */
  complete(clientId: string, reference: string) {
    return this.close(clientId, reference, { status: WITHDRAWAL_STATUS.COMPLETED });
  }

  /** The payout failed: an open withdrawal becomes FAILED and its funds return (a failed one is returned unchanged). */
  fail(clientId: string, reference: string, reason: string | null | undefined) {
    const failureReason = reason?.trim() || "The payout was rejected by the receiving bank";
    if (failureReason.length > 500) throw badInput("reason must be at most 500 characters");
    return this.close(clientId, reference, { status: WITHDRAWAL_STATUS.FAILED, failureReason });
  }

  private async initiate(payout: Payout): Promise<Withdrawal> {
    const { clientId, userId, currency, amount } = payout;
    const initiated = await inTransaction(this.deps.prisma, async (tx) => {
      const withdrawal = await tx.withdrawal.create({
        data: {
          reference: newReference(),
          clientId,
          userId,
          type: payout.type,
          currency,
          amount: amount.toFixed(),
          fee: FEE,
          status: WITHDRAWAL_STATUS.PENDING,
          destination: JSON.stringify(payout.destination),
          metadata: newMetadata(payout.metadata),
        },
      });
      // The ledger refuses a user balance below zero (INSUFFICIENT_FUNDS), rolling the record back too.
      await this.deps.ledger.post(prismaSql(tx), {
        clientId,
        type: "WITHDRAWAL",
        referenceId: withdrawal.reference,
        postings: [
          { account: { userId, currency }, amount: amount.negated(), type: "WITHDRAWAL" },
          { account: { system: "PAYOUTS", currency }, amount, type: "WITHDRAWAL" },
        ],
      });
      await recordEvent(prismaSql(tx), { clientId, userId, type: "withdrawal.created", object: eventObject.withdrawal(withdrawal) });
      return withdrawal;
    });
    this.deps.metrics.withdrawals.inc({ type: initiated.type, status: initiated.status });
    return initiated;
  }

  /**
   * Open → COMPLETED or FAILED. The update is conditional on the status, so of racing closes one
   * wins (the others wait on the row, then find it closed) and a failure is reversed exactly once.
   */
  private async close(clientId: string, reference: string, change: { status: "COMPLETED" | "FAILED"; failureReason?: string }) {
    checkReference(reference);
    const { withdrawal, closed } = await inTransaction(this.deps.prisma, async (tx) => {
      const moved = await tx.withdrawal.updateMany({ where: { reference, clientId, status: { in: OPEN } }, data: change });
      const withdrawal = await tx.withdrawal.findFirst({ where: { reference, clientId } });
      if (!withdrawal) throw notFound("Withdrawal");
      if (moved.count === 0 && withdrawal.status !== change.status) {
        throw new AppError("CONFLICT", `Withdrawal is already ${withdrawal.status}`);
      }
      if (moved.count && change.status === WITHDRAWAL_STATUS.FAILED) await this.reverse(tx, withdrawal);
      if (moved.count) {
        const type = change.status === WITHDRAWAL_STATUS.COMPLETED ? "withdrawal.completed" : "withdrawal.failed";
        await recordEvent(prismaSql(tx), { clientId, userId: withdrawal.userId, type, object: eventObject.withdrawal(withdrawal) });
      }
      return { withdrawal, closed: moved.count > 0 };
    });
    if (closed) this.deps.metrics.withdrawals.inc({ type: withdrawal.type, status: change.status });
    return withdrawal;
  }

  private reverse(tx: Tx, withdrawal: Withdrawal) {
    const amount = new Exact(withdrawal.amount.toString());
    const { clientId, userId, currency } = withdrawal;
    return this.deps.ledger.post(prismaSql(tx), {
      clientId,
      type: "WITHDRAWAL_REVERSAL",
      referenceId: withdrawal.reference,
      postings: [
        { account: { userId, currency }, amount, type: "WITHDRAWAL_REVERSAL" },
        { account: { system: "PAYOUTS", currency }, amount: amount.negated(), type: "WITHDRAWAL_REVERSAL" },
      ],
    });
  }
}

/** First-party payouts only: the account holder named in the request must be the user. */
function assertAccountHolder(user: User, request: { firstName: string; lastName: string; dob: string }) {
  if (!sameName(request.firstName, user.firstName)) throw badInput("firstName does not match the user's");
  if (!sameName(request.lastName, user.lastName)) throw badInput("lastName does not match the user's");
  if (request.dob !== user.dob.toISOString().slice(0, 10)) throw badInput("dob does not match the user's");
}
