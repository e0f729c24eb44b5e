import { builder } from "../graphql/builder.js";
import { LIVEMODE_FIELD } from "../graphql/livemode.js";
import { checkIdCursors } from "../graphql/cursors.js";
import { clientIdOf, requireTestMode, type Context } from "../graphql/context.js";
import { CONNECTION_LIMITS, CONNECTION_SIZES } from "../ledger/schema.js";
import { NEWEST_FIRST_RECORDS, newestFirstPage } from "../ledger/service.js";
import { CurrencyEnum, FiatCurrencyEnum } from "../ledger/currency-schema.js";
import type { Currency } from "../providers/fx.js";
import { NetworkEnum } from "../wallets/network-schema.js";
import { METADATA_DESCRIPTION, METADATA_INPUT_DESCRIPTION, storedMetadata } from "../metadata.js";
import { PIX_KEY_TYPES } from "../providers/brazil.js";
import { maskedDestination } from "./representation.js";
import { networkFeeOf, WITHDRAWAL_STATUSES, WITHDRAWAL_TYPES, type WithdrawalStatus, type WithdrawalType } from "./service.js";
import { BANK_CURRENCIES, BANK_CURRENCY_NAMES } from "./validation.js";

const BankWithdrawalCurrencyEnum = builder.enumType("BankWithdrawalCurrency", {
  description: "The currencies of withdrawToBank.",
  values: BANK_CURRENCIES,
});
const WithdrawalStatusEnum = builder.enumType("WithdrawalStatus", { values: WITHDRAWAL_STATUSES });
const WithdrawalTypeEnum = builder.enumType("WithdrawalType", {
  description: "BANK: USD, EUR, MXN or BRL to a bank account; NGN_BANK: NGN to a Nigerian bank account; USDC: on-chain.",
  values: WITHDRAWAL_TYPES,
});

builder.prismaObject("Withdrawal", {
  description:
    "Money paid out of a user's balance in its own currency: PENDING → PROCESSING → COMPLETED; FAILED from PENDING or PROCESSING (amount and fee return); RETURNED from COMPLETED (the amount returns, the developer fee is kept).",
  fields: (t) => ({
    reference: t.exposeID("reference"),
    livemode: t.boolean(LIVEMODE_FIELD),
    userId: t.exposeID("userId"),
    type: t.field({ type: WithdrawalTypeEnum, resolve: (withdrawal) => withdrawal.type as WithdrawalType }),
    currency: t.field({ type: CurrencyEnum, resolve: (withdrawal) => withdrawal.currency as Currency }),
    amount: t.expose("amount", { type: "Decimal" }),
    fee: t.expose("fee", { type: "Decimal", description: "networkFee plus developerFee: everything debited beside the amount" }),
    networkFee: t.field({
      type: "Decimal",
      description: "Our own fee: on a chain, the network fee of the network and token (paid on top of the amount, which arrives whole; refunded on failure or cancel); 0 elsewhere",
      resolve: (withdrawal) => networkFeeOf(withdrawal).toFixed(),
    }),
    developerFee: t.expose("developerFee", { type: "Decimal", description: "The client's own fee, credited to its revenue (clientBalances); refunded on failure, kept on return" }),
    status: t.field({ type: WithdrawalStatusEnum, resolve: (withdrawal) => withdrawal.status as WithdrawalStatus }),
    destination: t.string({
      description: "Masked: the last 4 characters of an account (****6789), the ends of an address (0x1234…abcd), a Pix key (Pix CPF ***.456.789-**)",
      select: { destination: true },
      resolve: (withdrawal) => maskedDestination(withdrawal),
    }),
    failureReason: t.exposeString("failureReason", { nullable: true, description: "Why it FAILED (the reason given to failWithdrawal); null otherwise" }),
    returnReason: t.exposeString("returnReason", { nullable: true, description: "Why the bank returned it; null until RETURNED" }),
    transactionHash: t.exposeString("transactionHash", {
      nullable: true,
      description: "USDC on a live network: the transaction that carries it (the latest broadcast, then the one mined); null otherwise",
    }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
    metadata: t.field({ type: "JSON", description: METADATA_DESCRIPTION, select: { metadata: true }, resolve: (withdrawal) => storedMetadata(withdrawal.metadata) }),
  }),
});

const WithdrawalCurrency = builder.simpleObject("WithdrawalCurrency", {
  fields: (t) => ({ code: t.field({ type: FiatCurrencyEnum }), name: t.string({ description: "English name" }) }),
});

builder.prismaObjectFields("User", (t) => ({
  withdrawals: t.relatedConnection(
    "withdrawals",
    { description: `Newest first. ${CONNECTION_SIZES}`, cursor: "id", ...CONNECTION_LIMITS, totalCount: true, query: (args) => (checkIdCursors(args), { orderBy: NEWEST_FIRST_RECORDS }) },
    { name: "WithdrawalConnection" },
    { name: "WithdrawalEdge" },
  ),
  withdrawalsPage: t.relation("withdrawals", {
    description: "The same withdrawals in numbered pages (as /v1 serves them): page ≥ 1, limit 1–1000 (default 100).",
    args: { page: t.arg.int(), limit: t.arg.int() },
    query: (args) => newestFirstPage(args),
  }),
}));

builder.queryFields((t) => ({
  withdrawal: t.prismaField({
    permission: "withdrawals:read",
    type: "Withdrawal",
    nullable: true,
    description: "One of the client's withdrawals by its reference; NOT_FOUND otherwise.",
    args: { reference: t.arg.id({ required: true }) },
    resolve: async (query, _root, args, ctx) => ctx.services.withdrawals.get(await clientIdOf(ctx), args.reference, query),
  }),
  supportedWithdrawalCurrencies: t.field({
    permission: "withdrawals:read",
    type: [WithdrawalCurrency],
    description: "The currencies of bank withdrawals (withdrawToBank).",
    extensions: { maxListSize: BANK_CURRENCIES.length },
    resolve: async (_root, _args, ctx) => {
      await ctx.client();
      return BANK_CURRENCIES.map((code) => ({ code, name: BANK_CURRENCY_NAMES[code] }));
    },
  }),
}));

const DEVELOPER_FEE =
  "The client's own fee, ≥ 0 in the withdrawal's currency (default 0): debited with the amount (the balance must cover both) and credited to the client's revenue";

const BankAccountInput = builder.inputType("BankAccountInput", {
  fields: (t) => ({
    account: t.string({ required: true, description: "USD: 4–17 digits; EUR: IBAN; MXN: 18-digit CLABE; BRL: account and check digit (12345678-9)" }),
    routing: t.string({ required: true, description: "USD: ABA routing number; EUR: BIC; MXN: the CLABE's 3-digit bank code; BRL: bank code and branch (260-0001)" }),
    type: t.string({ required: true, description: "checking or savings" }),
  }),
});

const PixKeyTypeEnum = builder.enumType("PixKeyType", {
  description: "CPF, CNPJ (check digits validated), EMAIL, PHONE (+55 E.164 mobile), EVP (a lower-case UUID).",
  values: PIX_KEY_TYPES,
});

const PixKeyInput = builder.inputType("PixKeyInput", {
  fields: (t) => ({
    keyType: t.field({ type: PixKeyTypeEnum, required: true }),
    key: t.string({ required: true, description: "CPF: 11 digits; CNPJ: 14 characters (masks accepted); EMAIL; PHONE: +5511987654321; EVP: a lower-case UUID" }),
  }),
});

const metadataInput = { type: "JSON", description: METADATA_INPUT_DESCRIPTION } as const;

const WithdrawToBankInput = builder.inputType("WithdrawToBankInput", {
  fields: (t) => ({
    currency: t.field({ type: BankWithdrawalCurrencyEnum, required: true }),
    userId: t.id({ required: true }),
    firstName: t.string({ required: true, description: "Must be the user's (first-party payouts only)" }),
    lastName: t.string({ required: true, description: "Must be the user's" }),
    dob: t.string({ required: true, description: "YYYY-MM-DD; must be the user's" }),
    amount: t.field({ type: "Decimal", required: true, description: "At least 0.01, at most 2 decimals" }),
    developerFee: t.field({ type: "Decimal", description: DEVELOPER_FEE }),
    bankAccount: t.field({ type: BankAccountInput, description: "Required for USD, EUR and MXN; for BRL, either this or pix" }),
    pix: t.field({ type: PixKeyInput, description: "BRL only, instead of bankAccount: the recipient's Pix key (taxId required)" }),
    taxId: t.string({ description: "BRL only: the recipient's CPF or CNPJ (check digits validated); required with pix, optional with bankAccount" }),
    metadata: t.field(metadataInput),
  }),
});

const WithdrawNgnInput = builder.inputType("WithdrawNgnInput", {
  fields: (t) => ({
    userId: t.id({ required: true }),
    amount: t.field({ type: "Decimal", required: true }),
    developerFee: t.field({ type: "Decimal", description: DEVELOPER_FEE }),
    accountNumber: t.string({ required: true, description: "10-digit NUBAN, valid for bankCode" }),
    bankCode: t.string({ required: true, description: "A 3-digit bank code, or the 5-digit code of another financial institution (microfinance bank…)" }),
    accountName: t.string({ required: true }),
    bankName: t.string(),
    narration: t.string(),
    metadata: t.field(metadataInput),
  }),
});

const WithdrawUsdcInput = builder.inputType("WithdrawUsdcInput", {
  fields: (t) => ({
    userId: t.id({ required: true }),
    amount: t.field({ type: "Decimal", required: true, description: "At most 6 decimals; on a chain, at least the network's minimum (the network fee is debited on top)" }),
    developerFee: t.field({ type: "Decimal", description: DEVELOPER_FEE }),
    walletAddress: t.string({
      required: true,
      description: "EVM address (all-lower, all-upper, or EIP-55 mixed case); never the zero address, a token contract, a treasury or a deposit address of this platform",
    }),
    network: t.field({ type: NetworkEnum, required: true }),
    chainId: t.int({ required: true, description: "Must be the network's: 1, 137, 8453, 42161 or 10" }),
    metadata: t.field(metadataInput),
  }),
});

const HELPERS = "A withdrawal already in the target status is returned unchanged; any other transition not allowed from its status is a CONFLICT (409), writing nothing.";

async function inSandbox<T>(ctx: Context, run: (clientId: string) => Promise<T>): Promise<T> {
  await requireTestMode(ctx);
  return run(await clientIdOf(ctx));
}

const FUNDS = "Debits the balance in the withdrawal's currency at once; INSUFFICIENT_FUNDS when it is short.";

builder.mutationFields((t) => ({
  withdrawToBank: t.prismaField({
    permission: "withdrawals:write",
    type: "Withdrawal",
    description: `A USD, EUR, MXN or BRL payout to the user's own bank account (BRL: or Pix key). ${FUNDS}`,
    args: { input: t.arg({ type: WithdrawToBankInput, required: true }) },
    resolve: async (_query, _root, args, ctx) => ctx.services.withdrawals.toBank(await clientIdOf(ctx), args.input.currency, args.input),
  }),
  withdrawNgn: t.prismaField({
    permission: "withdrawals:write",
    type: "Withdrawal",
    description: `An NGN payout to a Nigerian bank account. ${FUNDS}`,
    args: { input: t.arg({ type: WithdrawNgnInput, required: true }) },
    resolve: async (_query, _root, args, ctx) => ctx.services.withdrawals.toNgnBank(await clientIdOf(ctx), args.input),
  }),
  withdrawUsdc: t.prismaField({
    permission: "withdrawals:write",
    type: "Withdrawal",
    description: `A USDC transfer on-chain. ${FUNDS}`,
    args: { input: t.arg({ type: WithdrawUsdcInput, required: true }) },
    resolve: async (_query, _root, args, ctx) => ctx.services.withdrawals.toUsdc(await clientIdOf(ctx), args.input),
  }),
  cancelWithdrawal: t.prismaField({
    permission: "withdrawals:write",
    type: "Withdrawal",
    description:
      "Cancels a PENDING withdrawal nothing has been done with yet: CANCELLED, and the amount and the fee return to the balance, once. " +
      "On a chain, only while its transfer is not signed; after that (or once PROCESSING) it is a CONFLICT (409).",
    args: { reference: t.arg.id({ required: true }) },
    resolve: async (_query, _root, args, ctx) => ctx.services.withdrawals.cancel(await clientIdOf(ctx), args.reference),
  }),
  processWithdrawal: t.prismaField({
    permission: "withdrawals:write",
    type: "Withdrawal",
    description: `Sandbox: the payout provider accepted the payout, PENDING → PROCESSING. ${HELPERS}`,
    args: { reference: t.arg.id({ required: true }) },
    resolve: (_query, _root, args, ctx) => inSandbox(ctx, (clientId) => ctx.services.withdrawals.process(clientId, args.reference)),
  }),
  completeWithdrawal: t.prismaField({
    permission: "withdrawals:write",
    type: "Withdrawal",
    description: `Sandbox: the payout arrived, PENDING or PROCESSING → COMPLETED (from PENDING through PROCESSING: both changes are recorded). ${HELPERS}`,
    args: { reference: t.arg.id({ required: true }) },
    resolve: (_query, _root, args, ctx) => inSandbox(ctx, (clientId) => ctx.services.withdrawals.complete(clientId, args.reference)),
  }),
  failWithdrawal: t.prismaField({
    permission: "withdrawals:write",
    type: "Withdrawal",
    description: `Sandbox: the payout failed, PENDING or PROCESSING → FAILED; the amount and the fee return to the balance. ${HELPERS}`,
    args: { reference: t.arg.id({ required: true }), reason: t.arg.string({ description: "failureReason (at most 500 characters)" }) },
    resolve: (_query, _root, args, ctx) => inSandbox(ctx, (clientId) => ctx.services.withdrawals.fail(clientId, args.reference, args.reason)),
  }),
  returnWithdrawal: t.prismaField({
    permission: "withdrawals:write",
    type: "Withdrawal",
    description: `Sandbox: the bank sent the payout back, COMPLETED → RETURNED; the amount returns, the developer fee is kept. ${HELPERS}`,
    args: { reference: t.arg.id({ required: true }), reason: t.arg.string({ description: "returnReason (at most 500 characters)" }) },
    resolve: (_query, _root, args, ctx) => inSandbox(ctx, (clientId) => ctx.services.withdrawals.returnPayout(clientId, args.reference, args.reason)),
  }),
}));
