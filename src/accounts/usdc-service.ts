import { z } from "zod";
import type { Prisma, PrismaClient } from "../generated/prisma/client.js";
import { isUniqueViolation } from "../db/errors.js";
import { notFound } from "../errors.js";
import type { LiveNetworks } from "../chain/live.js";
import { modeOf } from "../modes.js";
import { NETWORK_NAMES, NETWORKS, networkByName, type Network } from "../providers/chains.js";
import type { UserService } from "../users/service.js";
import type { WalletService } from "../wallets/service.js";
import { parseInput, requireUuid } from "../validation.js";

/** What GraphQL asks to load with a USDC account (plugin-prisma's `query`). */
export type UsdcAccountSelection = Pick<Prisma.UsdcAccountFindFirstArgs, "select" | "include">;

export const USDC_ACCOUNT_ORDER = [{ createdAt: "asc" }, { chain: "asc" }] satisfies Prisma.UsdcAccountOrderByWithRelationInput[];


/** A chain name, case-insensitive, as one of the supported networks. */
const chain = (field: string) =>
  z
    .string({ error: `${field} is required` })
    .transform((name, ctx): Network => {
      const network = networkByName(name);
      if (!network) ctx.addIssue({ code: "custom", message: `${field} must be one of ${NETWORK_NAMES.join(", ")}` });
      return network ?? NETWORKS[0];
    });

/**
 * USDC accounts: one per (user, chain), each receiving at the user's custodial wallet address. The
 * balance shown with them is the user's USDC ledger balance (the ledger writes it).
 */
export class UsdcAccountService {
  constructor(private readonly deps: { prisma: PrismaClient; users: UserService; wallets: WalletService; networks: Pick<LiveNetworks, "assertUsable" | "receivingOn"> }) {}

  async list(clientId: string, userId: unknown, query: UsdcAccountSelection = {}) {
    const id = requireUuid(userId, "userId");
    await this.deps.users.get(clientId, id, { select: { id: true } });
    return this.deps.prisma.usdcAccount.findMany({ ...query, where: { userId: id, clientId }, orderBy: USDC_ACCOUNT_ORDER });
  }

  async get(clientId: string, userId: unknown, chainName: unknown, query: UsdcAccountSelection = {}) {
    const id = requireUuid(userId, "userId");
    const network = parseInput(chain("chain"), chainName);
    const account = await this.deps.prisma.usdcAccount.findFirst({ ...query, where: { userId: id, clientId, chain: network.name } });
    if (account) return account;
    await this.deps.users.get(clientId, id, { select: { id: true } });
    throw notFound(`USDC account on ${network.name}`);
  }

  /** Idempotent: the existing account on that chain, else a new one (creating the user's wallet if needed). */
  async ensure(clientId: string, userId: unknown, chainType: unknown, query: UsdcAccountSelection = {}) {
    const id = requireUuid(userId, "userId");
    const network = parseInput(chain("chainType"), chainType);
    const mode = await modeOf(this.deps.prisma, clientId);
    this.deps.networks.assertUsable(mode, network.name, "USDC", "chainType");
    // The chain and contract as this deployment runs the network in the caller's mode (an on-chain one's RPC id).
    const receiving = this.deps.networks.receivingOn(mode, network.name, "USDC", "chainType") ?? { chainId: network.chainId, tokenAddress: network.tokens.USDC };
    const where = { userId_chain: { userId: id, chain: network.name } };
    const wallet = await this.deps.wallets.ensure(clientId, id, { select: { address: true } });
    if (!(await this.deps.prisma.usdcAccount.findUnique({ where, select: { id: true } }))) {
      try {
        // In a transaction of its own: inside a keyed request's unit it is a savepoint, so the
        // unique violation below does not abort the request's transaction.
        await this.deps.prisma.$transaction((tx) => tx.usdcAccount.create({
          data: {
            userId: id,
            clientId,
            chain: network.name,
            chainId: receiving.chainId,
            address: wallet.address,
            tokenAddress: receiving.tokenAddress,
          },
        }));
      } catch (err) {
        // A concurrent request created it first: that one is returned.
        if (!isUniqueViolation(err)) throw err;
      }
    }
    return this.deps.prisma.usdcAccount.findUniqueOrThrow({ ...query, where });
  }
}
