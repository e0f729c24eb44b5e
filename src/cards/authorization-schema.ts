import { badInput } from "../errors.js";
import { builder } from "../graphql/builder.js";
import { LIVEMODE_FIELD } from "../graphql/livemode.js";
import { clientIdOf, requireTestMode } from "../graphql/context.js";
import { checkIdCursors } from "../graphql/cursors.js";
import { CurrencyEnum } from "../ledger/currency-schema.js";
import { NEWEST_FIRST_RECORDS } from "../ledger/service.js";
import type { Currency } from "../providers/fx.js";
import { AUTHORIZATION_STATUSES, DECLINE_REASONS, type AuthorizationStatus, type DeclineReason } from "./authorizations.js";

type ConnectionArgs = Parameters<typeof checkIdCursors>[0] & { first?: number | null; last?: number | null };

const CardAuthorizationStatusEnum = builder.enumType("CardAuthorizationStatus", {
  description: "PENDING holds the amount on the USD balance until CAPTURED, REVERSED or EXPIRED; DECLINED never held anything.",
  values: AUTHORIZATION_STATUSES,
});
const CardDeclineReasonEnum = builder.enumType("CardDeclineReason", {
  description: "Why an authorization was DECLINED (REST writes it in lower case: insufficient_funds, no_card).",
  values: DECLINE_REASONS,
});

builder.prismaObject("CardAuthorization", {
  description:
    "An authorization at the user's card (a hold): while PENDING its amount is held on the USD balance (available, not posted). " +
    "Captured, it is posted as a CARD_DEBIT and listed as the card transaction of the same id.",
  fields: (t) => ({
    id: t.exposeID("id"),
    livemode: t.boolean(LIVEMODE_FIELD),
    userId: t.exposeID("userId"),
    cardId: t.exposeID("cardId", { nullable: true, description: "Null when declined for want of a card" }),
    amount: t.expose("amount", { type: "Decimal", description: "The amount authorized (and held while PENDING)" }),
    currency: t.field({ type: CurrencyEnum, resolve: (authorization) => authorization.currency as Currency }),
    merchant: t.exposeString("merchant"),
    status: t.field({ type: CardAuthorizationStatusEnum, resolve: (authorization) => authorization.status as AuthorizationStatus }),
    declineReason: t.field({ type: CardDeclineReasonEnum, nullable: true, resolve: (authorization) => authorization.declineReason as DeclineReason | null }),
    capturedAmount: t.expose("capturedAmount", { type: "Decimal", nullable: true, description: "What the capture took (at most amount); null until CAPTURED" }),
    expiresAt: t.expose("expiresAt", { type: "DateTime", description: "When a PENDING authorization expires and its hold is released" }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
  }),
});

builder.prismaObjectFields("User", (t) => ({
  cardAuthorizations: t.relatedConnection(
    "cardAuthorizations",
    {
      description: "The user's card authorizations, newest first, of one status when `status` is given. first/after pages forward, last/before backward: 1–100 at a time (default 20).",
      args: { status: t.arg({ type: CardAuthorizationStatusEnum }) },
      cursor: "id",
      defaultSize: 20,
      maxSize: 100,
      // Read by the query cost rule.
      extensions: { defaultPageSize: 20 },
      query: (args) => {
        // With arguments of its own, the query's args are typed as those alone; the connection's are there too.
        const paging = args as typeof args & ConnectionArgs;
        checkIdCursors(paging);
        if ((paging.first ?? 1) < 1 || (paging.last ?? 1) < 1) throw badInput("the page size (first or last; limit on REST) must be an integer from 1 to 100");
        return { where: args.status ? { status: args.status } : {}, orderBy: NEWEST_FIRST_RECORDS };
      },
    },
    { name: "CardAuthorizationConnection" },
    { name: "CardAuthorizationEdge" },
  ),
}));

const SimulateCardAuthorizationInput = builder.inputType("SimulateCardAuthorizationInput", {
  fields: (t) => ({
    userId: t.id({ required: true }),
    amount: t.field({ type: "Decimal", required: true, description: "USD, at most 2 decimals" }),
    merchant: t.string({ required: true, description: "Merchant text, 1–255 characters" }),
  }),
});

builder.mutationFields((t) => ({
  simulateCardAuthorization: t.prismaField({
    permission: "cards:write",
    type: "CardAuthorization",
    description: "Sandbox: an authorization at the user's card. PENDING holds the amount on USD available; DECLINED (no card, or too little available) holds nothing.",
    args: { input: t.arg({ type: SimulateCardAuthorizationInput, required: true }) },
    resolve: async (_query, _root, args, ctx) => {
      await requireTestMode(ctx);
      return ctx.services.cardAuthorizations.authorize(await clientIdOf(ctx), args.input);
    },
  }),
  captureCardAuthorization: t.prismaField({
    permission: "cards:write",
    type: "CardAuthorization",
    description: "Sandbox: captures a PENDING authorization for amount (at most the authorized amount; all of it by default): the hold is released and a CARD_DEBIT posted. CONFLICT from any other status.",
    args: { id: t.arg.id({ required: true }), amount: t.arg({ type: "Decimal" }) },
    resolve: async (_query, _root, args, ctx) => {
      await requireTestMode(ctx);
      return ctx.services.cardAuthorizations.capture(await clientIdOf(ctx), args.id, args.amount);
    },
  }),
  reverseCardAuthorization: t.prismaField({
    permission: "cards:write",
    type: "CardAuthorization",
    description: "Sandbox: reverses a PENDING authorization, releasing its hold. CONFLICT from any other status.",
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_query, _root, args, ctx) => {
      await requireTestMode(ctx);
      return ctx.services.cardAuthorizations.reverse(await clientIdOf(ctx), args.id);
    },
  }),
}));
