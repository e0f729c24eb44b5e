import { builder } from "../graphql/builder.js";
import { LIVEMODE_FIELD } from "../graphql/livemode.js";
import { clientIdOf } from "../graphql/context.js";
import { NETWORKS, type Network } from "../providers/chains.js";
import { NetworkEnum } from "../wallets/network-schema.js";
import { USDC_ACCOUNT_ORDER } from "./usdc-service.js";

builder.prismaObject("UsdcAccount", {
  description: "A USDC account on one chain, receiving at the user's custodial wallet address.",
  fields: (t) => ({
    id: t.exposeID("id"),
    livemode: t.boolean(LIVEMODE_FIELD),
    userId: t.exposeID("userId"),
    chain: t.field({ type: NetworkEnum, resolve: (account) => account.chain as Network["name"] }),
    chainId: t.exposeInt("chainId"),
    address: t.exposeString("address", { description: "The user's custodial wallet address" }),
    tokenAddress: t.exposeString("tokenAddress", { description: "The USDC token contract on this chain" }),
    balance: t.field({
      type: "Decimal",
      description: "The user's USDC ledger balance (0 before the first movement)",
      // Loaded with the account itself, so a list of accounts costs no extra query per account.
      select: {
        user: { select: { ledgerAccounts: { where: { code: "USER", currency: "USDC" }, select: { balance: true } } } },
      },
      resolve: (account) => account.user.ledgerAccounts[0]?.balance ?? "0",
    }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
  }),
});

builder.prismaObjectFields("User", (t) => ({
  // One per network at most (read by the query cost rule, as every maxListSize).
  usdcAccounts: t.relation("usdcAccounts", { query: { orderBy: USDC_ACCOUNT_ORDER }, extensions: { maxListSize: NETWORKS.length } }),
}));

builder.queryFields((t) => ({
  usdcAccounts: t.prismaField({
    permission: "accounts:read",
    type: ["UsdcAccount"],
    description: "A user's USDC accounts, oldest first.",
    extensions: { maxListSize: NETWORKS.length },
    args: { userId: t.arg.id({ required: true }) },
    resolve: async (query, _root, args, ctx) => ctx.services.usdcAccounts.list(await clientIdOf(ctx), args.userId, query),
  }),
  usdcAccount: t.prismaField({
    permission: "accounts:read",
    type: "UsdcAccount",
    nullable: true,
    description: "A user's USDC account on one chain (case-insensitive); NOT_FOUND when there is none.",
    args: { userId: t.arg.id({ required: true }), chain: t.arg({ type: NetworkEnum, required: true }) },
    resolve: async (query, _root, args, ctx) => ctx.services.usdcAccounts.get(await clientIdOf(ctx), args.userId, args.chain, query),
  }),
}));

builder.mutationFields((t) => ({
  createUsdcAccount: t.prismaField({
    permission: "accounts:write",
    type: "UsdcAccount",
    description: "Idempotent: returns the existing account on that chain; creates the user's wallet when absent.",
    args: {
      userId: t.arg.id({ required: true }),
      chainType: t.arg({ type: NetworkEnum, required: true }),
    },
    resolve: async (query, _root, args, ctx) =>
      ctx.services.usdcAccounts.ensure(await clientIdOf(ctx), args.userId, args.chainType, query),
  }),
}));
