import type { PrismaClient } from "../generated/prisma/client.js";
import { isUniqueViolation } from "../db/errors.js";
import type { WalletCustodian } from "../providers/custodian.js";
import type { EnsureWallet } from "./virtual-account-service.js";

/**
 * Stands in for the wallets service's get-or-create until src/wallets/ lands; then services.ts
 * passes that method instead and this file goes. The caller has already checked the user's tenant.
 */
export const interimEnsureWallet =
  (prisma: PrismaClient, custodian: WalletCustodian): EnsureWallet =>
  async (clientId, userId) => {
    const existing = await prisma.wallet.findUnique({ where: { userId } });
    if (existing) return existing;
    const custodial = await custodian.createWallet();
    try {
      return await prisma.wallet.create({ data: { userId, clientId, ...custodial } });
    } catch (err) {
      const winner = isUniqueViolation(err) ? await prisma.wallet.findUnique({ where: { userId } }) : null;
      if (winner) return winner;
      throw err;
    }
  };
