import { builder } from "../graphql/builder.js";
import { LIVEMODE_FIELD } from "../graphql/livemode.js";
import { clientIdOf } from "../graphql/context.js";
import { CurrencyEnum } from "../ledger/currency-schema.js";
import type { Currency } from "../providers/fx.js";

/** Each quote writes a row: one operation may ask for a few, not thousands through aliases. */
const MAX_QUOTES_PER_OPERATION = 5;

const CONVERSION_TERMS = "rate: units of `to` per unit of `from` (mid rate less the spread); fee: in `from`, deducted before converting.";

builder.prismaObject("ConversionQuote", {
  description: `A price for a conversion, valid 30 seconds and for one conversion. ${CONVERSION_TERMS}`,
  fields: (t) => ({
    id: t.exposeID("id"),
    livemode: t.boolean(LIVEMODE_FIELD),
    from: t.field({ type: CurrencyEnum, resolve: (quote) => quote.from as Currency }),
    to: t.field({ type: CurrencyEnum, resolve: (quote) => quote.to as Currency }),
    amount: t.expose("amount", { type: "Decimal" }),
    rate: t.expose("rate", { type: "Decimal" }),
    fee: t.expose("fee", { type: "Decimal" }),
    convertedAmount: t.expose("convertedAmount", { type: "Decimal" }),
    expiresAt: t.expose("expiresAt", { type: "DateTime" }),
  }),
});

builder.prismaObject("Conversion", {
  description: `A completed conversion of a user's funds. ${CONVERSION_TERMS}`,
  fields: (t) => ({
    id: t.exposeID("id"),
    livemode: t.boolean(LIVEMODE_FIELD),
    userId: t.exposeID("userId"),
    from: t.field({ type: CurrencyEnum, resolve: (conversion) => conversion.from as Currency }),
    to: t.field({ type: CurrencyEnum, resolve: (conversion) => conversion.to as Currency }),
    amount: t.expose("amount", { type: "Decimal" }),
    rate: t.expose("rate", { type: "Decimal" }),
    fee: t.expose("fee", { type: "Decimal" }),
    convertedAmount: t.expose("convertedAmount", { type: "Decimal" }),
    quoteId: t.exposeID("quoteId", { nullable: true }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
  }),
});

const CreateConversionInput = builder.inputType("CreateConversionInput", {
  fields: (t) => ({
    userId: t.id({ required: true }),
    from: t.field({ type: CurrencyEnum, required: true }),
    to: t.field({ type: CurrencyEnum, required: true }),
    amount: t.field({ type: "Decimal", required: true, description: "In `from`, at most its decimals (fiat 2, USDC/USDT 6, DAI 18)" }),
    quoteId: t.id({ description: "Locks the quote's rate; must match from, to and amount and be unexpired and unused" }),
  }),
});

builder.queryFields((t) => ({
  conversionQuote: t.prismaField({
    permission: "conversions:read",
    type: "ConversionQuote",
    description: "Prices a conversion and keeps the price 30 seconds for one createConversion. Each quote is stored: at most 5 in one operation (aliases count) and 300 unused ones per client at once.",
    // Read by the query cost rule.
    extensions: { maxPerOperation: MAX_QUOTES_PER_OPERATION },
    args: { from: t.arg({ type: CurrencyEnum, required: true }), to: t.arg({ type: CurrencyEnum, required: true }), amount: t.arg({ type: "Decimal", required: true }) },
    resolve: async (_query, _root, args, ctx) => ctx.services.conversion.quote(await clientIdOf(ctx), args),
  }),
}));

builder.mutationFields((t) => ({
  createConversion: t.prismaField({
    permission: "conversions:write",
    type: "Conversion",
    description: "Converts a user's funds in one transaction; INSUFFICIENT_FUNDS when the `from` balance is short.",
    args: { input: t.arg({ type: CreateConversionInput, required: true }) },
    resolve: async (_query, _root, args, ctx) => ctx.services.conversion.convert(await clientIdOf(ctx), args.input),
  }),
}));
