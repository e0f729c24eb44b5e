import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { PrismaClient } from "../generated/prisma/client.js";
import { inTransaction } from "../db/transaction.js";
import { prismaSql } from "../db/sql.js";
import { recordEvent } from "../events/log.js";
import { eventObject } from "../events/objects.js";
import { notFound } from "../errors.js";
import { parseAmount } from "../ledger/amount.js";
import type { LedgerService } from "../ledger/service.js";
import type { UserService } from "../users/service.js";
import { parseInput, uuid } from "../validation.js";

const CARD_CURRENCY = "USD";

export const CardSpend = z.object({
  userId: uuid("userId"),
  amount: z.unknown(),
  description: z.string({ error: "description is required" }).trim().min(1, "description must be 1 to 255 characters").max(255, "description must be 1 to 255 characters"),
});

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
    return inTransaction(this.deps.prisma, async (tx) => {
      const id = randomUUID();
      const { entries } = await this.deps.ledger.post(prismaSql(tx), {
        clientId,
        type: "CARD_DEBIT",
        referenceId: id,
        postings: [
          { account: { userId: user.id, currency: CARD_CURRENCY }, amount: amount.negated(), type: "CARD_DEBIT" },
          { account: { system: "CARD_SETTLEMENT", currency: CARD_CURRENCY }, amount, type: "CARD_DEBIT" },
        ],
      });
      const balance = entries.find((entry) => entry.userId === user.id)!.balanceAfter;
      const transaction = await tx.cardTransaction.create({
        data: { id, cardId: card.id, userId: user.id, clientId, amount: amount.toFixed(), balance, description, status: "SETTLED", type: "DEBIT" },
      });
      await recordEvent(prismaSql(tx), { clientId, userId: user.id, type: "card.transaction.created", object: eventObject.cardTransaction(transaction) });
      return transaction;
    });
  }
}
