import { builder } from "../graphql/builder.js";
import { LIVEMODE_FIELD } from "../graphql/livemode.js";
import { clientIdOf } from "../graphql/context.js";
import { CurrencyEnum } from "../ledger/currency-schema.js";
import { CURRENCIES, type Currency } from "../providers/fx.js";

/** The client's revenue in one currency. */
export type ClientBalance = { currency: Currency; posted: string; pending: string; available: string };

const ClientBalanceRef = builder.objectRef<ClientBalance>("ClientBalance").implement({
  description:
    "The client's own revenue in one currency: the developer fees it charged its users (deposits into accounts with developerFeePercent, withdrawals with developerFee), less those refunded by failed withdrawals. Revenue has no holds and no pending credits, so pending and available equal posted.",
  fields: (t) => ({
    currency: t.field({ type: CurrencyEnum, resolve: (balance) => balance.currency }),
    livemode: t.boolean(LIVEMODE_FIELD),
    posted: t.field({ type: "Decimal", resolve: (balance) => balance.posted }),
    pending: t.field({ type: "Decimal", resolve: (balance) => balance.pending }),
    available: t.field({ type: "Decimal", resolve: (balance) => balance.available }),
  }),
});

builder.queryFields((t) => ({
  clientBalances: t.field({
    permission: "accounts:read",
    type: [ClientBalanceRef],
    description: "The calling client's revenue, one row per currency it has earned in (alphabetical); empty before its first developer fee.",
    extensions: { maxListSize: CURRENCIES.length },
    resolve: async (_root, _args, ctx) => {
      const revenue = await ctx.services.ledger.clientRevenue(await clientIdOf(ctx));
      return revenue.map(({ currency, balance }) => {
        const posted = balance.toFixed();
        return { currency: currency as Currency, posted, pending: posted, available: posted };
      });
    },
  }),
}));
