import { builder } from "../graphql/builder.js";
import { LIVEMODE_FIELD } from "../graphql/livemode.js";
import { clientIdOf } from "../graphql/context.js";
import type { Network } from "../providers/chains.js";
import { NetworkEnum } from "./network-schema.js";

builder.prismaObject("Wallet", {
  description: "A custodial EVM wallet. The custodian keeps the keys; none is stored or returned here.",
  fields: (t) => ({
    id: t.exposeID("id"),
    livemode: t.boolean(LIVEMODE_FIELD),
    userId: t.exposeID("userId"),
    clientId: t.exposeID("clientId"),
    walletId: t.exposeID("walletId", { description: "Identifier at the custodian" }),
    addressId: t.exposeID("addressId", { description: "Identifier of the address at the custodian" }),
    address: t.exposeString("address", { description: "EIP-55 checksummed EVM address" }),
    blockchain: t.field({ type: NetworkEnum, resolve: (wallet) => wallet.blockchain as Network["name"] }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
  }),
});

builder.prismaObjectFields("User", (t) => ({
  wallet: t.relation("wallet", { nullable: true }),
}));

builder.queryFields((t) => ({
  wallet: t.prismaField({
    permission: "wallets:read",
    type: "Wallet",
    nullable: true,
    description: "A user's wallet; NOT_FOUND when the user or the wallet does not exist.",
    args: { userId: t.arg.id({ required: true }) },
    resolve: async (query, _root, args, ctx) => ctx.services.wallets.get(await clientIdOf(ctx), args.userId, query),
  }),
}));

builder.mutationFields((t) => ({
  createWallet: t.prismaField({
    permission: "wallets:write",
    type: "Wallet",
    description: "Creates the user's wallet at the custodian; returns the existing one when there is one.",
    args: { userId: t.arg.id({ required: true }) },
    resolve: async (query, _root, args, ctx) => ctx.services.wallets.ensure(await clientIdOf(ctx), args.userId, query),
  }),
}));
