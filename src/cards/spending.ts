import { randomUUID } from "node:crypto";
import type { Decimal } from "decimal.js";
import { z } from "zod";
import type { PrismaClient } from "../generated/prisma/client.js";
import { inTransaction, type Tx } from "../db/transaction.js";
import { prismaSql } from "../db/sql.js";
import { recordEvent } from "../events/log.js";
import { cardTransactionObject } from "./representation.js";
import { notFound } from "../errors.js";
import { parseAmount } from "../money/amount.js";
import type { LedgerService } from "../ledger/service.js";
import type { HoldChange } from "../ledger/types.js";
import type { UserService } from "../users/service.js";
import { parseInput, uuid } from "../validation.js";

/** The card is a USD debit card: its spending and holds are on the user's USD balance. */
export const CARD_CURRENCY = "USD";

/** What a card payment names its merchant with: 1–255 characters. */
export const merchantText = (field: string) =>
  z.string({ error: `${field} is required` }).trim().min(1, `${field} must be 1 to 255 characters`).max(255, `${field} must be 1 to 255 characters`);

export const CardSpend = z.object({
  userId: uuid("userId"),
  amount: z.unknown(),
  description: merchantText("description"),
});

/** A settled card debit: its ledger journal, card transaction and event. */
export type CardDebit = { id: string; clientId: string; userId: string; cardId: string; amount: Decimal; description: string };

/** Card purchases: each one settles against the user's USD balance (the card is a USD debit card). */
export class CardSpendingService {
  constructor(private readonly deps: { prisma: PrismaClient; users: UserService; ledger: LedgerService }) {}

  /**
   * A settled DEBIT on the user's card, with its CARD_DEBIT journal in the same transaction;
   * INSUFFICIENT_FUNDS when the USD balance is short, NOT_FOUND when the user has no card.
   */
  async settleDebit(clientId: string, input: { userId: unknown; amount: unknown; description: unknown }) {
    const { userId, description, amount: rawAmount } = parseInput(CardSpend, input);
    const amount = parseAmount(rawAmount, CARD_CURRENCY);
    const user = await this.deps.users.get(clientId, userId, { select: { id: true } });
    const card = await this.deps.prisma.card.findFirst({ where: { userId: user.id, clientId }, select: { id: true } });
    if (!card) throw notFound("Virtual card");
    return inTransaction(this.deps.prisma, (tx) => this.debitInTransaction(tx, { id: randomUUID(), clientId, userId: user.id, cardId: card.id, amount, description }));
  }

  /**
   * Posts a settled debit inside the caller's transaction: the CARD_DEBIT journal (under the funds
   * rule), the SETTLED card transaction with the balance after it, and its event. `holds` are
   * changed under the same account locks, before the debit is checked (a capture releases its hold).
   */
  async debitInTransaction(tx: Tx, debit: CardDebit, holds: HoldChange[] = []) {
    const { id, clientId, userId, cardId, amount, description } = debit;
    const { entries } = await this.deps.ledger.post(
      prismaSql(tx),
      {
        clientId,
        type: "CARD_DEBIT",
        referenceId: id,
        postings: [
          { account: { userId, currency: CARD_CURRENCY }, amount: amount.negated(), type: "CARD_DEBIT" },
          { account: { system: "CARD_SETTLEMENT", currency: CARD_CURRENCY }, amount, type: "CARD_DEBIT" },
        ],
      },
      holds,
    );
    const balance = entries.find((entry) => entry.userId === userId)!.balanceAfter;
    const transaction = await tx.cardTransaction.create({
      data: { id, cardId, userId, clientId, amount: amount.toFixed(), balance, description, status: "SETTLED", type: "DEBIT" },
    });
    await recordEvent(prismaSql(tx), { clientId, userId, type: "card.transaction.created", object: cardTransactionObject(transaction) });
    return transaction;
  }
}
