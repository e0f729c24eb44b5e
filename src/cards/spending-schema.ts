import { builder } from "../graphql/builder.js";
import { clientIdOf, requireTestMode } from "../graphql/context.js";

const SimulateCardTransactionInput = builder.inputType("SimulateCardTransactionInput", {
  fields: (t) => ({
    userId: t.id({ required: true }),
    amount: t.field({ type: "Decimal", required: true, description: "USD, at most 2 decimals" }),
    description: t.string({ required: true, description: "Merchant text, 1–255 characters" }),
  }),
});

builder.mutationFields((t) => ({
  simulateCardTransaction: t.prismaField({
    permission: "cards:write",
    type: "CardTransaction",
    description: "Sandbox: a settled card DEBIT against the user's USD balance (the user must have a card).",
    args: { input: t.arg({ type: SimulateCardTransactionInput, required: true }) },
    resolve: async (_query, _root, args, ctx) => {
      await requireTestMode(ctx);
      return ctx.services.cardSpending.settleDebit(await clientIdOf(ctx), args.input);
    },
  }),
}));
