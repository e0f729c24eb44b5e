import { builder } from "../graphql/builder.js";
import { LIVEMODE_FIELD } from "../graphql/livemode.js";
import type { Currency } from "../providers/fx.js";
import { checkIdCursors } from "../graphql/cursors.js";
import { clientIdOf, requireTestMode } from "../graphql/context.js";
import { CurrencyEnum } from "../ledger/currency-schema.js";
import { CONNECTION_LIMITS, CONNECTION_SIZES } from "../ledger/schema.js";
import { NEWEST_FIRST_RECORDS, newestFirstPage } from "../ledger/service.js";
import { DEPOSIT_STATUSES, type DepositStatus } from "../ledger/deposit-types.js";

const DepositStatusEnum = builder.enumType("DepositStatus", { values: DEPOSIT_STATUSES });

builder.prismaObject("Deposit", {
  description: "Money received for a user: fiat at a virtual account, or a token transfer to the user's wallet.",
  fields: (t) => ({
    id: t.exposeID("id"),
    livemode: t.boolean(LIVEMODE_FIELD),
    userId: t.exposeID("userId"),
    eventId: t.exposeID("eventId", { description: "The provider's reference of the payment (on-chain: transaction hash and log index)" }),
    amount: t.expose("amount", { type: "Decimal" }),
    status: t.field({ type: DepositStatusEnum, resolve: (deposit) => deposit.status as DepositStatus }),
    currency: t.field({ type: CurrencyEnum, resolve: (deposit) => deposit.currency as Currency }),
    provider: t.exposeString("provider"),
    virtualAccountId: t.exposeID("virtualAccountId", { nullable: true }),
    paymentReference: t.exposeString("paymentReference", { nullable: true, description: "NGN bank deposits" }),
    tokenAddress: t.exposeString("tokenAddress", { nullable: true, description: "On-chain deposits" }),
    transactionHash: t.exposeString("transactionHash", { nullable: true, description: "On-chain deposits" }),
    chainId: t.exposeInt("chainId", { nullable: true, description: "On-chain deposits" }),
    failureReason: t.exposeString("failureReason", { nullable: true }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
  }),
});

builder.prismaObjectFields("User", (t) => ({
  deposits: t.relatedConnection(
    "deposits",
    { description: `Newest first. ${CONNECTION_SIZES}`, cursor: "id", ...CONNECTION_LIMITS, totalCount: true, query: (args) => (checkIdCursors(args), { orderBy: NEWEST_FIRST_RECORDS }) },
    { name: "DepositConnection" },
    { name: "DepositEdge" },
  ),
  depositsPage: t.relation("deposits", {
    description: "The same deposits in numbered pages (as /v1 serves them): page ≥ 1, limit 1–1000 (default 100).",
    args: { page: t.arg.int(), limit: t.arg.int() },
    query: (args) => newestFirstPage(args),
  }),
}));

builder.queryFields((t) => ({
  deposit: t.prismaField({
    permission: "deposits:read",
    type: "Deposit",
    nullable: true,
    description: "One of the client's deposits; NOT_FOUND otherwise.",
    args: { id: t.arg.id({ required: true }) },
    resolve: async (query, _root, args, ctx) => ctx.services.deposits.get(await clientIdOf(ctx), args.id, query),
  }),
}));

const SimulateDepositInput = builder.inputType("SimulateDepositInput", {
  fields: (t) => ({
    userId: t.id({ required: true }),
    currency: t.field({ type: CurrencyEnum, required: true, description: "NGN, USD, EUR, MXN, BRL (to the user's virtual account) or USDC, USDT, DAI (on-chain to the user's wallet)" }),
    amount: t.field({ type: "Decimal", required: true }),
    chainId: t.int({ description: "On-chain only; default 1 (Ethereum)" }),
  }),
});

builder.mutationFields((t) => ({
  simulateDeposit: t.prismaField({
    permission: "deposits:write",
    type: "Deposit",
    description: "Sandbox: money arrives for the user through the provider's webhook; returns the PENDING deposit, which settles by itself after SANDBOX_SETTLE_MS.",
    args: { input: t.arg({ type: SimulateDepositInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      await requireTestMode(ctx);
      return ctx.services.sandboxDeposits.simulate(await clientIdOf(ctx), args.input, query);
    },
  }),
  completeDeposit: t.prismaField({
    permission: "deposits:write",
    type: "Deposit",
    description: "Sandbox: the provider reports the deposit settled (a completed one is returned unchanged).",
    args: { id: t.arg.id({ required: true }) },
    resolve: async (query, _root, args, ctx) => {
      await requireTestMode(ctx);
      return ctx.services.sandboxDeposits.complete(await clientIdOf(ctx), args.id, query);
    },
  }),
  failDeposit: t.prismaField({
    permission: "deposits:write",
    type: "Deposit",
    description: "Sandbox: the provider reports the deposit failed (a failed one is returned unchanged).",
    args: { id: t.arg.id({ required: true }), reason: t.arg.string() },
    resolve: async (query, _root, args, ctx) => {
      await requireTestMode(ctx);
      return ctx.services.sandboxDeposits.fail(await clientIdOf(ctx), args.id, args.reason, query);
    },
  }),
}));
