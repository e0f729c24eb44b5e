import type { Prisma, PrismaClient } from "../generated/prisma/client.js";
import { isUniqueViolation } from "../db/errors.js";
import { AppError, notFound } from "../errors.js";
import type { Logger } from "../logger.js";
import type { CardHolder, CardIssuer, IssuedCard } from "../providers/card-issuer.js";
import { decrypt, encrypt } from "../providers/encryption.js";
import { requireUuid } from "../validation.js";

/** Concurrent requests for one user queue on its row lock, and the issuer is called while it is held. */
const ISSUING_TRANSACTION = { maxWait: 10_000, timeout: 15_000 };

/** What GraphQL asks to load with a card (plugin-prisma's `query`). */
export type CardSelection = Pick<Prisma.CardFindFirstArgs, "select" | "include">;

/**
 * One virtual card per user. The number and CVV are stored only encrypted (AES-256-GCM) and are
 * decrypted only to build the card payload; they never reach a log line.
 */
export class CardService {
  constructor(
    private readonly deps: { prisma: PrismaClient; issuer: CardIssuer; encryptionKey: Buffer; logger: Logger },
  ) {}

  /** The user's card, issued on the first call; later (and concurrent) calls return that one card. */
  async ensure(clientId: string, userId: unknown, query: CardSelection = {}) {
    const id = requireUuid(userId, "userId");
    const { prisma } = this.deps;
    const existing = await prisma.card.findFirst({ ...query, where: { userId: id, clientId } });
    if (existing) return existing;
    try {
      await prisma.$transaction(async (tx) => {
        // The user's row lock makes concurrent requests (on any instance) wait here, so only one
        // of them reaches the issuer: the others find its card and leave no stray card behind.
        const [holder] = await tx.$queryRaw<CardHolder[]>`
          SELECT "firstName", "lastName" FROM users WHERE id = ${id}::uuid AND "clientId" = ${clientId}::uuid FOR UPDATE`;
        if (!holder) throw notFound("User");
        if (await tx.card.findUnique({ where: { userId: id }, select: { id: true } })) return;
        const issued = await this.issue(holder);
        await tx.card.create({ data: { userId: id, clientId, ...this.sealed(issued) } });
      }, ISSUING_TRANSACTION);
    } catch (err) {
      // A card inserted without the lock (never by this service) still wins: it is re-read below.
      if (!isUniqueViolation(err)) throw err;
    }
    return prisma.card.findUniqueOrThrow({ ...query, where: { userId: id } });
  }

  /** A stored card secret (number or CVV) in plain text, for the card payload only. */
  reveal(ciphertext: string): string {
    return decrypt(this.deps.encryptionKey, ciphertext);
  }

  private async issue(holder: CardHolder): Promise<IssuedCard> {
    try {
      return await this.deps.issuer.issueCard(holder);
    } catch (err) {
      this.deps.logger.warn({ err }, "card issuer failed");
      throw new AppError("PROVIDER_ERROR", "Card issuing failed at the card issuer");
    }
  }

  private sealed(card: IssuedCard) {
    const key = this.deps.encryptionKey;
    return {
      providerId: card.providerId,
      cardNumberEnc: encrypt(key, card.cardNumber),
      cardCvvEnc: encrypt(key, card.cvv),
      last4: card.cardNumber.replace(/\D/g, "").slice(-4),
      cardExpiry: card.expiry,
    };
  }
}
