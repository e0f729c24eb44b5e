import { builder } from "../graphql/builder.js";
import { clientIdOf } from "../graphql/context.js";
import type { AccountBalance } from "./balance-lookup-service.js";

const AccountBalanceRef = builder.objectRef<AccountBalance>("AccountBalance").implement({
  description: "A user's balance in one fiat currency, with the virtual account in that currency when there is one.",
  fields: (t) => ({
    currency: t.exposeString("currency"),
    balance: t.field({ type: "Decimal", resolve: (account) => account.balance }),
    virtualAccount: t.prismaField({
      type: "VirtualAccount",
      nullable: true,
      description: "The user's virtual account in this currency (GBP never has one).",
      resolve: (query, account, _args, ctx) => ctx.services.virtualAccounts.getForUser(account.clientId, account.userId, account.currency, query),
    }),
  }),
});

builder.queryFields((t) => ({
  accountBalance: t.field({
    type: AccountBalanceRef,
    description: "currency: NGN, USD, GBP or EUR (any case).",
    args: { userId: t.arg.id({ required: true }), currency: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => ctx.services.balanceLookup.lookup(await clientIdOf(ctx), args.userId, args.currency),
  }),
}));
