import { builder } from "../graphql/builder.js";
import { LIVEMODE_FIELD } from "../graphql/livemode.js";
import { clientIdOf } from "../graphql/context.js";
import { checkIdCursors } from "../graphql/cursors.js";
import { NEWEST_FIRST_RECORDS } from "../ledger/service.js";
import { CARD_TRANSACTIONS_PER_PAGE, type CardTransactionService } from "./transactions.js";

builder.prismaObject("Card", {
  name: "VirtualCard",
  description: "A USD virtual debit card. Number and CVV are stored encrypted and decrypted only here.",
  fields: (t) => ({
    id: t.exposeID("id"),
    livemode: t.boolean(LIVEMODE_FIELD),
    userId: t.exposeID("userId"),
    providerId: t.exposeID("providerId", { description: "Identifier at the card issuer" }),
    cardNumber: t.string({
      description: "Groups of four digits separated by spaces",
      select: { cardNumberEnc: true },
      resolve: (card, _args, ctx) => ctx.services.cards.reveal(card.cardNumberEnc),
    }),
    cardCVV: t.string({
      select: { cardCvvEnc: true },
      resolve: (card, _args, ctx) => ctx.services.cards.reveal(card.cardCvvEnc),
    }),
    cardExpiry: t.exposeString("cardExpiry", { description: "MM/YY" }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
  }),
});

const CardTransactionRef = builder.prismaObject("CardTransaction", {
  fields: (t) => ({
    id: t.exposeID("id"),
    livemode: t.boolean(LIVEMODE_FIELD),
    amount: t.expose("amount", { type: "Decimal" }),
    balance: t.expose("balance", { type: "Decimal", description: "Balance after the transaction" }),
    description: t.exposeString("description", { description: "Merchant text" }),
    status: t.exposeString("status"),
    type: t.exposeString("type"),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
  }),
});

type CardTransactionPage = Awaited<ReturnType<CardTransactionService["page"]>>;

const CardTransactionPageRef = builder.objectRef<CardTransactionPage>("CardTransactionPage").implement({
  description: "One page (20 per page, newest first) of a card's transactions.",
  fields: (t) => ({
    page: t.exposeInt("page"),
    pages: t.exposeInt("pages"),
    total: t.exposeInt("total"),
    transactions: t.field({ type: [CardTransactionRef], extensions: { maxListSize: CARD_TRANSACTIONS_PER_PAGE }, resolve: (page) => page.transactions }),
  }),
});

builder.prismaObjectFields("User", (t) => ({
  card: t.relation("card", { nullable: true, description: "The user's virtual card; reading never creates one." }),
  cardTransactions: t.relatedConnection(
    "cardTransactions",
    {
      description: "The user's card transactions, newest first (none without a card). first/after pages forward, last/before backward: 1–100 at a time (default 20).",
      cursor: "id",
      defaultSize: 20,
      maxSize: 100,
      // Read by the query cost rule.
      extensions: { defaultPageSize: 20 },
      totalCount: true,
      query: (args) => (checkIdCursors(args), { orderBy: NEWEST_FIRST_RECORDS }),
    },
    { name: "CardTransactionConnection" },
    { name: "CardTransactionEdge" },
  ),
}));

builder.queryFields((t) => ({
  cardTransactionsPage: t.field({
    permission: "cards:read",
    type: CardTransactionPageRef,
    description: "A user's card transactions in numbered pages of 20 (as /v1 serves them); NOT_FOUND when the user is unknown or has no card.",
    args: { userId: t.arg.id({ required: true }), page: t.arg.int({ defaultValue: 1 }) },
    resolve: async (_root, args, ctx) => ctx.services.cardTransactions.page(await clientIdOf(ctx), args.userId, args.page),
  }),
}));

builder.mutationFields((t) => ({
  createVirtualCard: t.prismaField({
    permission: "cards:write",
    type: "Card",
    description: "Issues the user's card; returns the existing one when there is one.",
    args: { userId: t.arg.id({ required: true }) },
    resolve: async (query, _root, args, ctx) => ctx.services.cards.ensure(await clientIdOf(ctx), args.userId, query),
  }),
}));
