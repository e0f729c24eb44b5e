import { z } from "zod";
import type { CardAuthorization, PrismaClient } from "../generated/prisma/client.js";
import { prismaSql } from "../db/sql.js";
import { inTransaction, type Tx } from "../db/transaction.js";
import { recordEvent } from "../events/log.js";
import { cardAuthorizationObject } from "./authorization-representation.js";
import type { EventType } from "../events/types.js";
import { AppError, badInput, notFound } from "../errors.js";
import { Exact, parseAmount } from "../money/amount.js";
import type { LedgerService } from "../ledger/service.js";
import type { HoldChange } from "../ledger/types.js";
import type { UserService } from "../users/service.js";
import { parseInput, requireUuid, uuid } from "../validation.js";
import { CARD_CURRENCY, merchantText, type CardSpendingService } from "./spending.js";

export const AUTHORIZATION_STATUSES = ["PENDING", "CAPTURED", "REVERSED", "EXPIRED", "DECLINED"] as const;
export type AuthorizationStatus = (typeof AUTHORIZATION_STATUSES)[number];
export const DECLINE_REASONS = ["INSUFFICIENT_FUNDS", "NO_CARD"] as const;
export type DeclineReason = (typeof DECLINE_REASONS)[number];

export const CardAuthorizationRequest = z.object({ userId: uuid("userId"), amount: z.unknown(), merchant: merchantText("merchant") });

/** The advisory lock an expiry batch holds: of several instances, one expires authorizations at a time. */
const EXPIRY_LOCK = 7_318_204_462;

const held = (authorization: CardAuthorization): HoldChange => ({
  userId: authorization.userId,
  currency: authorization.currency,
  amount: new Exact(authorization.amount.toString()),
});
const released = (authorization: CardAuthorization): HoldChange => ({ ...held(authorization), amount: held(authorization).amount.negated() });

/**
 * Card authorizations, as card issuers run them: an authorization holds its amount on the user's
 * USD balance (PENDING) or is DECLINED, holding nothing; a capture releases the hold and posts the
 * card debit (a settled card transaction of the same id), a reversal or the expiry only releases it.
 * Every change of status is a conditional update of a PENDING row, so of racing changes one wins and
 * the others are a CONFLICT that writes nothing. Holds change under the ledger's account locks.
 */
export class CardAuthorizationService {
  constructor(
    private readonly deps: { prisma: PrismaClient; users: UserService; ledger: LedgerService; spending: CardSpendingService; ttlMs: number },
  ) {}

  /** An authorization at the card: PENDING with its amount held, or DECLINED (no card, or too little available), recorded either way. */
  async authorize(clientId: string, input: { userId: unknown; amount: unknown; merchant: unknown }) {
    const { userId, merchant, amount: rawAmount } = parseInput(CardAuthorizationRequest, input);
    const amount = parseAmount(rawAmount, CARD_CURRENCY);
    const user = await this.deps.users.get(clientId, userId, { select: { id: true } });
    const card = await this.deps.prisma.card.findFirst({ where: { userId: user.id, clientId }, select: { id: true } });
    return inTransaction(this.deps.prisma, async (tx) => {
      const declineReason = card ? await this.hold(tx, clientId, { userId: user.id, currency: CARD_CURRENCY, amount }) : "NO_CARD";
      const createdAt = new Date();
      const authorization = await tx.cardAuthorization.create({
        data: {
          clientId,
          userId: user.id,
          cardId: card?.id ?? null,
          amount: amount.toFixed(),
          currency: CARD_CURRENCY,
          merchant,
          status: declineReason ? "DECLINED" : "PENDING",
          declineReason,
          createdAt,
          expiresAt: new Date(createdAt.getTime() + this.deps.ttlMs),
        },
      });
      await this.recordEvent(tx, "card.authorization.created", authorization);
      return authorization;
    });
  }

  /**
   * PENDING → CAPTURED for `amount` (at most the authorized amount; all of it by default): the hold
   * is released and the captured amount posted as a CARD_DEBIT, in one transaction.
   */
  async capture(clientId: string, id: unknown, amountInput?: unknown) {
    const authorizationId = requireUuid(id, "id");
    return inTransaction(this.deps.prisma, async (tx) => {
      const authorization = await this.find(tx, clientId, authorizationId);
      const authorized = new Exact(authorization.amount.toString());
      const amount = amountInput == null ? authorized : parseAmount(amountInput, CARD_CURRENCY);
      if (amount.greaterThan(authorized)) throw badInput(`amount must be at most the authorized amount, ${authorized.toFixed()}`);
      const captured = await this.move(tx, authorization, "CAPTURED", { capturedAmount: amount.toFixed() });
      const { userId, cardId, merchant } = captured;
      await this.deps.spending.debitInTransaction(tx, { id: captured.id, clientId, userId, cardId: cardId!, amount, description: merchant }, [released(captured)]);
      await this.recordEvent(tx, "card.authorization.captured", captured);
      return captured;
    });
  }

  /** PENDING → REVERSED: the hold is released, nothing is posted. */
  async reverse(clientId: string, id: unknown) {
    const authorizationId = requireUuid(id, "id");
    return inTransaction(this.deps.prisma, async (tx) => {
      const reversed = await this.move(tx, await this.find(tx, clientId, authorizationId), "REVERSED");
      await this.deps.ledger.changeHolds(prismaSql(tx), clientId, [released(reversed)]);
      await this.recordEvent(tx, "card.authorization.reversed", reversed);
      return reversed;
    });
  }

  /**
   * One batch of PENDING authorizations past their expiry → EXPIRED, their holds released. Null
   * when another instance holds the expiry lock; rows a capture or reversal holds are skipped (they
   * are left to it, or to the next batch).
   */
  async expireDue(now: Date, batch: number): Promise<number | null> {
    return inTransaction(this.deps.prisma, async (tx) => {
      const [{ locked }] = await tx.$queryRaw<{ locked: boolean }[]>`SELECT pg_try_advisory_xact_lock(${EXPIRY_LOCK}::bigint) AS locked`;
      if (!locked) return null;
      const due = await tx.$queryRaw<{ id: string }[]>`
        SELECT "id" FROM "card_authorizations" WHERE "status" = 'PENDING' AND "expiresAt" <= ${now}
        ORDER BY "expiresAt" LIMIT ${batch} FOR UPDATE SKIP LOCKED`;
      if (!due.length) return 0;
      const ids = due.map((row) => row.id);
      await tx.cardAuthorization.updateMany({ where: { id: { in: ids }, status: "PENDING" }, data: { status: "EXPIRED" } });
      const expired = await tx.cardAuthorization.findMany({ where: { id: { in: ids } }, orderBy: { expiresAt: "asc" } });
      for (const clientId of new Set(expired.map((authorization) => authorization.clientId))) {
        await this.deps.ledger.changeHolds(prismaSql(tx), clientId, expired.filter((a) => a.clientId === clientId).map(released));
      }
      for (const authorization of expired) await this.recordEvent(tx, "card.authorization.expired", authorization);
      return expired.length;
    });
  }

  /** Places the hold; the decline reason when the funds rule refuses it. */
  private async hold(tx: Tx, clientId: string, hold: HoldChange): Promise<DeclineReason | null> {
    try {
      await this.deps.ledger.changeHolds(prismaSql(tx), clientId, [hold]);
      return null;
    } catch (err) {
      // Thrown by the funds check before anything was written: the transaction goes on to record the decline.
      if (err instanceof AppError && err.code === "INSUFFICIENT_FUNDS") return "INSUFFICIENT_FUNDS";
      throw err;
    }
  }

  /** Another client's authorization is exactly as unknown as one that does not exist. */
  private async find(tx: Tx, clientId: string, id: string) {
    const authorization = await tx.cardAuthorization.findFirst({ where: { id, clientId } });
    if (!authorization) throw notFound("Card authorization");
    return authorization;
  }

  /**
   * PENDING (and not past its expiry) → `status`, as a conditional update: a racing change waits on
   * the row, then finds it moved and is refused (CONFLICT) without writing anything.
   */
  private async move(tx: Tx, authorization: CardAuthorization, status: AuthorizationStatus, data: { capturedAmount?: string } = {}) {
    const { id, clientId } = authorization;
    const moved = await tx.cardAuthorization.updateMany({ where: { id, clientId, status: "PENDING", expiresAt: { gt: new Date() } }, data: { status, ...data } });
    const current = await tx.cardAuthorization.findFirstOrThrow({ where: { id, clientId } });
    if (moved.count) return current;
    if (current.status === "PENDING") throw new AppError("CONFLICT", "Card authorization has expired");
    throw new AppError("CONFLICT", `Card authorization is already ${current.status}`);
  }

  private recordEvent(tx: Tx, type: EventType, authorization: CardAuthorization) {
    return recordEvent(prismaSql(tx), { clientId: authorization.clientId, userId: authorization.userId, type, object: cardAuthorizationObject(authorization) });
  }
}
