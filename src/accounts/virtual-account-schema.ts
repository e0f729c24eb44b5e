import { builder } from "../graphql/builder.js";
import { LIVEMODE_FIELD } from "../graphql/livemode.js";
import { clientIdOf } from "../graphql/context.js";
import { CurrencyEnum, FiatCurrencyEnum } from "../ledger/currency-schema.js";
import type { Network } from "../providers/chains.js";
import type { Currency, FiatCurrency } from "../providers/fx.js";
import { NetworkEnum } from "../wallets/network-schema.js";
import { METADATA_DESCRIPTION, METADATA_INPUT_DESCRIPTION, storedMetadata } from "../metadata.js";
import { VIRTUAL_ACCOUNT_CURRENCIES } from "./virtual-account-currencies.js";

const VirtualAccountCurrencyEnum = builder.enumType("VirtualAccountCurrency", {
  description: "The currencies a virtual account can be opened in.",
  values: VIRTUAL_ACCOUNT_CURRENCIES,
});

builder.prismaObject("VirtualAccount", {
  description: "A bank account that receives fiat for a user; what arrives is converted to destinationAsset and sent to destinationAddress.",
  fields: (t) => ({
    id: t.exposeID("id"),
    livemode: t.boolean(LIVEMODE_FIELD),
    userId: t.exposeID("userId"),
    currency: t.field({ type: FiatCurrencyEnum, resolve: (account) => account.currency as FiatCurrency }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    destinationAsset: t.field({ type: CurrencyEnum, resolve: (account) => account.destinationAsset as Currency }),
    destinationNetwork: t.field({ type: NetworkEnum, resolve: (account) => account.destinationNetwork as Network["name"] }),
    destinationAddress: t.exposeString("destinationAddress"),
    bankName: t.exposeString("bankName"),
    accountNumber: t.exposeString("accountNumber", { description: "NUBAN (NGN), IBAN (EUR), CLABE (MXN), account-digit (BRL) or account number (USD)" }),
    accountName: t.exposeString("accountName", { nullable: true, description: "NGN only" }),
    bankCode: t.exposeString("bankCode", { nullable: true, description: "NGN only" }),
    routingNumber: t.exposeString("routingNumber", { nullable: true, description: "ABA (USD), BIC (EUR), bank code (MXN), bank-branch (BRL)" }),
    accountHolderName: t.exposeString("accountHolderName", { nullable: true, description: "USD, EUR, MXN, BRL" }),
    accountHolderType: t.exposeString("accountHolderType", { nullable: true, description: "USD, EUR, MXN, BRL" }),
    bankAddress: t.exposeString("bankAddress", { nullable: true, description: "USD, EUR, MXN, BRL" }),
    developerFeePercent: t.expose("developerFeePercent", {
      type: "Decimal",
      description: "The client's own fee on each deposit, in percent of the converted amount, taken in destinationAsset before forwarding (0 when none)",
    }),
    metadata: t.field({ type: "JSON", description: METADATA_DESCRIPTION, select: { metadata: true }, resolve: (account) => storedMetadata(account.metadata) }),
  }),
});

builder.prismaObjectFields("User", (t) => ({
  // One per currency at most.
  virtualAccounts: t.relation("virtualAccounts", { query: { orderBy: [{ createdAt: "asc" }, { id: "asc" }] }, extensions: { maxListSize: VIRTUAL_ACCOUNT_CURRENCIES.length } }),
}));

const CreateVirtualAccountInput = builder.inputType("CreateVirtualAccountInput", {
  fields: (t) => ({
    currency: t.field({ type: VirtualAccountCurrencyEnum, required: true }),
    userId: t.id({ required: true }),
    destinationAsset: t.field({ type: CurrencyEnum, description: "USDC (default), USDT or DAI" }),
    destinationNetwork: t.field({ type: NetworkEnum, description: "Default ETHEREUM" }),
    address: t.string({ description: "0x destination address; default the user's custodial wallet (created when absent)" }),
    developerFeePercent: t.field({
      type: "Decimal",
      description: "The client's own fee on each deposit: 0 to 10 percent, at most 2 decimals (default 0), of the converted amount, credited to the client's revenue",
    }),
    metadata: t.field({ type: "JSON", description: `${METADATA_INPUT_DESCRIPTION} Kept when the account is opened; an existing account is returned as it is.` }),
  }),
});

builder.mutationFields((t) => ({
  createVirtualAccount: t.prismaField({
    permission: "accounts:write",
    type: "VirtualAccount",
    description: "The user's account in the currency; an existing one is returned as it is.",
    args: { input: t.arg({ type: CreateVirtualAccountInput, required: true }) },
    resolve: async (_query, _root, args, ctx) => ctx.services.virtualAccounts.create(await clientIdOf(ctx), args.input),
  }),
}));
