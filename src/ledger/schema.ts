import { DEPOSIT_STATUS } from "./deposit-types.js";
import { builder } from "../graphql/builder.js";
import { LIVEMODE_FIELD } from "../graphql/livemode.js";
import { clientIdOf } from "../graphql/context.js";
import { checkIdCursors } from "../graphql/cursors.js";
import { CURRENCIES, type Currency } from "../providers/fx.js";
import { CurrencyEnum } from "./currency-schema.js";
import { ENTRY_TYPES, type EntryType } from "./types.js";
import { BALANCE_MEANINGS, threeBalances, type ThreeBalances } from "./balances.js";
import { clientEntries, ledgerPage, NEWEST_FIRST, type LedgerService } from "./service.js";
import type { ChainReport, LedgerVerification } from "./verify.js";

/** Money record connections: pages of up to 1000 (the numbered pages' limit), 100 by default. */
export const CONNECTION_LIMITS = { defaultSize: 100, maxSize: 1000 };
export const CONNECTION_SIZES = "first/after pages forward, last/before backward: 1–1000 at a time (default 100).";

const LedgerEntryTypeEnum = builder.enumType("LedgerEntryType", { values: ENTRY_TYPES });

const LedgerEntryRef = builder.prismaObject("LedgerEntry", {
  description: "One movement of a user balance. amount is signed: positive credits the balance.",
  fields: (t) => ({
    id: t.exposeID("id"),
    livemode: t.boolean(LIVEMODE_FIELD),
    // Only user entries are ever served (system accounts stay internal), so userId is always set.
    userId: t.id({ select: { userId: true }, resolve: (entry) => entry.userId! }),
    type: t.field({ type: LedgerEntryTypeEnum, resolve: (entry) => entry.type as EntryType }),
    currency: t.field({ type: CurrencyEnum, resolve: (entry) => entry.currency as Currency }),
    amount: t.expose("amount", { type: "Decimal" }),
    balanceBefore: t.expose("balanceBefore", { type: "Decimal" }),
    balanceAfter: t.expose("balanceAfter", { type: "Decimal" }),
    referenceId: t.exposeID("referenceId", { nullable: true, description: "The deposit, conversion, withdrawal or card transaction behind it" }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
  }),
});

const BalanceRef = builder.objectRef<ThreeBalances>("Balance").implement({
  description: "A user's balances in one currency: posted (the ledger), pending (with deposits on their way and less holds) and available (what may be spent).",
  fields: (t) => ({
    currency: t.field({ type: CurrencyEnum, resolve: (row) => row.currency as Currency }),
    livemode: t.boolean(LIVEMODE_FIELD),
    balance: t.field({ type: "Decimal", description: BALANCE_MEANINGS.balance, resolve: (row) => row.posted }),
    posted: t.field({ type: "Decimal", description: BALANCE_MEANINGS.posted, resolve: (row) => row.posted }),
    pending: t.field({ type: "Decimal", description: BALANCE_MEANINGS.pending, resolve: (row) => row.pending }),
    available: t.field({ type: "Decimal", description: BALANCE_MEANINGS.available, resolve: (row) => row.available }),
  }),
});

const LedgerChain = builder.objectRef<ChainReport>("LedgerChain").implement({
  description: "One balance's chain of entries, recomputed from its first entry.",
  fields: (t) => ({
    currency: t.field({ type: CurrencyEnum, resolve: (chain) => chain.currency as Currency }),
    entries: t.exposeInt("entries"),
    balance: t.field({ type: "Decimal", resolve: (chain) => chain.balance }),
    valid: t.exposeBoolean("valid"),
    problems: t.exposeStringList("problems"),
  }),
});

const LedgerVerificationRef = builder.objectRef<LedgerVerification>("LedgerVerification").implement({
  description: "Whether a user's entries are intact: contiguous chains, consistent balances, matching hashes, balanced journals.",
  fields: (t) => ({
    valid: t.exposeBoolean("valid"),
    chains: t.field({ type: [LedgerChain], extensions: { maxListSize: CURRENCIES.length }, resolve: (report) => report.chains }),
  }),
});

type LedgerPage = Awaited<ReturnType<LedgerService["clientEntries"]>>;

const LedgerPageRef = builder.objectRef<LedgerPage>("LedgerPage").implement({
  fields: (t) => ({
    page: t.exposeInt("page"),
    pages: t.exposeInt("pages"),
    total: t.exposeInt("total"),
    transactions: t.field({ type: [LedgerEntryRef], resolve: (page) => page.transactions }),
  }),
});

builder.prismaObjectFields("User", (t) => ({
  balances: t.field({
    type: [BalanceRef],
    description: "One row per currency the user has ever held or has a deposit PENDING in, by currency.",
    extensions: { maxListSize: CURRENCIES.length },
    select: {
      ledgerAccounts: { where: { code: "USER" }, select: { currency: true, balance: true, held: true } },
      deposits: { where: { status: DEPOSIT_STATUS.PENDING }, select: { currency: true, amount: true } },
    },
    resolve: (user) => threeBalances(user.ledgerAccounts, user.deposits),
  }),
  ledger: t.relatedConnection(
    "ledgerEntries",
    { description: `The user's ledger entries, newest first. ${CONNECTION_SIZES}`, cursor: "id", ...CONNECTION_LIMITS, totalCount: true, query: (args) => (checkIdCursors(args), { orderBy: NEWEST_FIRST }) },
    { name: "LedgerEntryConnection" },
    { name: "LedgerEntryEdge" },
  ),
  ledgerPage: t.relation("ledgerEntries", {
    description: "The same entries in numbered pages (as /v1 serves them): page ≥ 1, limit 1–1000 (default 100).",
    args: { page: t.arg.int({ defaultValue: 1 }), limit: t.arg.int({ defaultValue: 100 }) },
    query: (args) => {
      const { page, limit } = ledgerPage(args);
      return { orderBy: NEWEST_FIRST, skip: (page - 1) * limit, take: limit };
    },
  }),
  ledgerVerification: t.field({
    type: LedgerVerificationRef,
    description: "Recomputes the user's chains and hashes; valid is false when any entry was altered.",
    select: { id: true, clientId: true },
    resolve: (user, _args, ctx) => ctx.services.ledger.verify(user.clientId, user.id),
  }),
}));

builder.queryFields((t) => ({
  transactions: t.prismaConnection(
    {
      permission: "ledger:read",
      type: "LedgerEntry",
      description: `Every ledger entry of the client's users, newest first. ${CONNECTION_SIZES}`,
      cursor: "id",
      ...CONNECTION_LIMITS,
      totalCount: async (_root, _args, ctx) => ctx.prisma.ledgerEntry.count({ where: clientEntries(await clientIdOf(ctx)) }),
      resolve: async (query, _root, args, ctx) => {
        checkIdCursors(args);
        return ctx.prisma.ledgerEntry.findMany({ ...query, where: clientEntries(await clientIdOf(ctx)), orderBy: NEWEST_FIRST });
      },
    },
    { name: "TransactionConnection" },
    { name: "TransactionEdge" },
  ),
  transactionsPage: t.field({
    permission: "ledger:read",
    type: LedgerPageRef,
    description: "The same entries in numbered pages (as /v1 serves them): page ≥ 1, limit 1–1000 (default 100).",
    args: { page: t.arg.int({ defaultValue: 1 }), limit: t.arg.int({ defaultValue: 100 }) },
    resolve: async (_root, args, ctx) => ctx.services.ledger.clientEntries(await clientIdOf(ctx), args),
  }),
}));
