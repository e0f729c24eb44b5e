import type { PrismaClient } from "../generated/prisma/client.js";
import { notFound } from "../errors.js";
import type { UserService } from "../users/service.js";
import { pageNumber, parseInput, requireUuid } from "../validation.js";

export const CARD_TRANSACTIONS_PER_PAGE = 20;

export const parsePageNumber = (page: unknown): number => parseInput(pageNumber, page);

/** A user's card transactions, newest first, in pages of 20 (the contract's envelope). */
export class CardTransactionService {
  constructor(private readonly deps: { prisma: PrismaClient; users: UserService }) {}

  /** NOT_FOUND when the user is unknown or has no card. */
  async page(clientId: string, userId: unknown, page: unknown) {
    const id = requireUuid(userId, "userId");
    const number = parsePageNumber(page);
    const card = await this.deps.prisma.card.findFirst({ where: { userId: id, clientId }, select: { id: true } });
    if (!card) {
      await this.deps.users.get(clientId, id, { select: { id: true } });
      throw notFound("Virtual card");
    }
    return (await this.pagesOfCards([card.id], number)).get(card.id)!;
  }

  /**
   * The same page of several cards in three statements, whatever the number of cards (GraphQL
   * lists of users batch through here). A page past the end is empty, with the true `pages` and `total`.
   */
  async pagesOfCards(cardIds: string[], page: number) {
    const { prisma } = this.deps;
    const first = (page - 1) * CARD_TRANSACTIONS_PER_PAGE;
    const [totals, window] = await Promise.all([
      prisma.cardTransaction.groupBy({ by: ["cardId"], where: { cardId: { in: cardIds } }, _count: { _all: true } }),
      prisma.$queryRaw<{ id: string }[]>`
        SELECT id FROM (
          SELECT id, ROW_NUMBER() OVER (PARTITION BY "cardId" ORDER BY "createdAt" DESC, id DESC) AS position
          FROM card_transactions WHERE "cardId" = ANY(${cardIds}::uuid[])
        ) ranked
        WHERE position > ${first} AND position <= ${first + CARD_TRANSACTIONS_PER_PAGE}`,
    ]);
    const rows = window.length
      ? await prisma.cardTransaction.findMany({
          where: { id: { in: window.map((row) => row.id) } },
          orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        })
      : [];
    return new Map(
      cardIds.map((cardId) => {
        const total = totals.find((t) => t.cardId === cardId)?._count._all ?? 0;
        const transactions = rows.filter((row) => row.cardId === cardId);
        return [cardId, { page, pages: Math.ceil(total / CARD_TRANSACTIONS_PER_PAGE), total, transactions }];
      }),
    );
  }
}
