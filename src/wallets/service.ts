import type { Prisma, PrismaClient } from "../generated/prisma/client.js";
import { isUniqueViolation } from "../db/errors.js";
import { modeOf } from "../modes.js";
import { AppError, notFound } from "../errors.js";
import type { Logger } from "../logger.js";
import type { WalletCustodian } from "../providers/custodian.js";
import type { UserService } from "../users/service.js";
import { requireUuid } from "../validation.js";

/** What GraphQL asks to load with a wallet (plugin-prisma's `query`). */
export type WalletSelection = Pick<Prisma.WalletFindFirstArgs, "select" | "include">;

/** One custodial wallet per user. No key material is ever stored here: the custodian keeps it. */
export class WalletService {
  /** Wallet creations under way in this process, by user: concurrent callers share one. */
  private readonly creating = new Map<string, Promise<void>>();

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
    await this.createOnce(clientId, id);
    const created = await this.deps.prisma.wallet.findUnique({ ...query, where: { userId: id } });
    if (created) return created;
    // The shared creation ran in a keyed request whose transaction has not committed yet (see
    // src/db/unit-of-work.ts): this insert waits for that commit, then finds the wallet taken.
    await this.create(clientId, id);
    return this.deps.prisma.wallet.findUniqueOrThrow({ ...query, where: { userId: id } });
  }

  private createOnce(clientId: string, userId: string): Promise<void> {
    let pending = this.creating.get(userId);
    if (!pending) {
      pending = this.create(clientId, userId).finally(() => this.creating.delete(userId));
      this.creating.set(userId, pending);
    }
    return pending;
  }

  private async create(clientId: string, userId: string): Promise<void> {
    // A request that read "no wallet" just before another one here created it arrives after that
    // creation has finished: it must find the wallet rather than ask the custodian again.
    if (await this.deps.prisma.wallet.count({ where: { userId } })) return;
    let custodial;
    try {
      custodial = await this.deps.custodian.createWallet(await modeOf(this.deps.prisma, clientId));
    } catch (err) {
      this.deps.logger.warn({ err, userId }, "wallet custodian failed");
      throw new AppError("PROVIDER_ERROR", "Wallet creation failed at the custodian");
    }
    try {
      // In a transaction of its own: inside a keyed request's unit it is a savepoint, so the unique
      // violation below does not abort the request's transaction.
      await this.deps.prisma.$transaction((tx) => tx.wallet.create({ data: { userId, clientId, ...custodial } }));
    } catch (err) {
      // Another instance created the user's wallet first: that one is the user's wallet.
      if (!isUniqueViolation(err)) throw err;
    }
  }
}
