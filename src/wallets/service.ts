import type { Prisma, PrismaClient } from "../generated/prisma/client.js";
import { TRANSACTION_WAITS } from "../db/transaction.js";
import { AppError, notFound } from "../errors.js";
import type { Logger } from "../logger.js";
import type { WalletCustodian } from "../providers/custodian.js";
import type { UserService } from "../users/service.js";
import { requireUuid } from "../validation.js";

/** What GraphQL asks to load with a wallet (plugin-prisma's `query`). */
export type WalletSelection = Pick<Prisma.WalletFindFirstArgs, "select" | "include">;

/** One custodial wallet per user. No key material is ever stored here: the custodian keeps it. */
export class WalletService {
  constructor(
    private readonly deps: { prisma: PrismaClient; custodian: WalletCustodian; users: UserService; logger: Logger },
  ) {}

  async get(clientId: string, userId: unknown, query: WalletSelection = {}) {
    const id = requireUuid(userId, "userId");
    const wallet = await this.deps.prisma.wallet.findFirst({ ...query, where: { userId: id, clientId } });
    if (wallet) return wallet;
    await this.deps.users.get(clientId, id, { select: { id: true } });
    throw notFound("Wallet");
  }

  /** The user's wallet, created at the custodian on the first call; later calls return it. */
  async ensure(clientId: string, userId: unknown, query: WalletSelection = {}) {
    const id = requireUuid(userId, "userId");
    await this.deps.users.get(clientId, id, { select: { id: true } });
    const existing = await this.deps.prisma.wallet.findUnique({ ...query, where: { userId: id } });
    if (existing) return existing;
    await this.create(clientId, id);
    return this.deps.prisma.wallet.findUniqueOrThrow({ ...query, where: { userId: id } });
  }

  /**
   * Under the user's row lock, so that of concurrent requests (on any instance, or in keyed requests
   * whose transactions have not committed yet) only one asks the custodian: the others wait, then
   * find its wallet.
   */
  private async create(clientId: string, userId: string): Promise<void> {
    await this.deps.prisma.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT id FROM users WHERE id = ${userId}::uuid FOR UPDATE`;
      if (await tx.wallet.count({ where: { userId } })) return;
      let custodial;
      try {
        custodial = await this.deps.custodian.createWallet();
      } catch (err) {
        this.deps.logger.warn({ err, userId }, "wallet custodian failed");
        throw new AppError("PROVIDER_ERROR", "Wallet creation failed at the custodian");
      }
      await tx.wallet.create({ data: { userId, clientId, ...custodial } });
    }, TRANSACTION_WAITS);
  }
}
