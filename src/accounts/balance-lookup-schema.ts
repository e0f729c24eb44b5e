import { builder } from "../graphql/builder.js";
import { LIVEMODE_FIELD } from "../graphql/livemode.js";
import { clientIdOf } from "../graphql/context.js";
import { BALANCE_MEANINGS } from "../ledger/balances.js";
import { FiatCurrencyEnum } from "../ledger/currency-schema.js";
import { LOOKUP_CURRENCIES, type AccountBalance } from "./balance-lookup-service.js";

const LookupCurrencyEnum = builder.enumType("AccountBalanceCurrency", {
  description: "The currencies accountBalance answers for.",
  values: LOOKUP_CURRENCIES,
});

const AccountBalanceRef = builder.objectRef<AccountBalance>("AccountBalance").implement({
  description: "A user's balance in one fiat currency, with the virtual account in that currency when there is one.",
  fields: (t) => ({
    currency: t.expose("currency", { type: FiatCurrencyEnum }),
    livemode: t.boolean(LIVEMODE_FIELD),
    balance: t.field({ type: "Decimal", description: BALANCE_MEANINGS.balance, resolve: (account) => account.balance }),
    posted: t.field({ type: "Decimal", description: BALANCE_MEANINGS.posted, resolve: (account) => account.posted }),
    pending: t.field({ type: "Decimal", description: BALANCE_MEANINGS.pending, resolve: (account) => account.pending }),
    available: t.field({ type: "Decimal", description: BALANCE_MEANINGS.available, resolve: (account) => account.available }),
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
    permission: "accounts:read",
    type: AccountBalanceRef,
    args: { userId: t.arg.id({ required: true }), currency: t.arg({ type: LookupCurrencyEnum, required: true }) },
    resolve: async (_root, args, ctx) => ctx.services.balanceLookup.lookup(await clientIdOf(ctx), args.userId, args.currency),
  }),
}));
