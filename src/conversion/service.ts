import { Decimal } from "decimal.js";
import { z } from "zod";
import type { Conversion, ConversionQuote, PrismaClient } from "../generated/prisma/client.js";
import { prismaSql, type Sql } from "../db/sql.js";
import { inTransaction, type Tx } from "../db/transaction.js";
import { recordEvent } from "../events/log.js";
import { conversionObject } from "./representation.js";
import { AppError, badInput } from "../errors.js";
import { Exact, parseAmount } from "../money/amount.js";
import type { LedgerService } from "../ledger/service.js";
import type { JournalInput, Posting } from "../ledger/types.js";
import { CURRENCIES, currencyDecimals, RATE_DECIMALS, type Currency, type FxSource } from "../providers/fx.js";
import type { UserService } from "../users/service.js";
import { insertConversion } from "./records.js";
import { parseInput, upperCaseCode, uuid } from "../validation.js";

/** Our margin on the mid-market rate: the customer gets 0.5% fewer units of the target currency. */
const FX_SPREAD = new Exact("0.005");
/**
 * A transparent fee of 0.1% of the amount, in the FROM currency, rounded DOWN to its decimals (so a
 * tiny amount pays none). It is debited from the user as its own FEE entry and credited to FEES;
 * the rest of the amount is what gets converted.
 */
const CONVERSION_FEE_RATE = new Exact("0.001");
const QUOTE_TTL_MS = 30_000;
/**
 * Unused quotes are deleted once this old (well after they expire, so a late redemption still hears
 * "expired"), and a client may hold at most MAX_OPEN_QUOTES unused ones younger than this: the table
 * holds a bounded number of unused quotes per client, however many are asked for.
 */
const QUOTE_KEPT_MS = 120_000;
export const MAX_OPEN_QUOTES = 300;

export const Pair = z
  .object({ from: upperCaseCode("from", CURRENCIES), to: upperCaseCode("to", CURRENCIES), amount: z.unknown() })
  .refine((pair) => pair.from !== pair.to, { message: "from and to must be different currencies", path: ["to"] });

export const ConversionRequest = z.object({ userId: uuid("userId"), quoteId: uuid("quoteId").nullish() });

type Terms = { from: Currency; to: Currency; amount: Decimal; rate: Decimal; fee: Decimal; convertedAmount: Decimal };

/** from/to/amount checked: known and distinct currencies, an amount valid in the FROM currency. */
function parsePair(input: { from: unknown; to: unknown; amount: unknown }) {
  const pair = parseInput(Pair, input);
  return { from: pair.from, to: pair.to, amount: parseAmount(pair.amount, pair.from) };
}

/** Conversion between any two supported currencies, at the mid rate less the spread, recorded in the ledger. */
export class ConversionService {
  constructor(private readonly deps: { prisma: PrismaClient; users: UserService; ledger: LedgerService; fx: FxSource }) {}

  /**
   * Prices a conversion and keeps the price for 30 seconds, for one conversion of the client's. The
   * client's unused quotes older than QUOTE_KEPT_MS go first; beyond MAX_OPEN_QUOTES recent unused
   * ones the quote is refused (RATE_LIMITED) until they age out or are used.
   */
  async quote(clientId: string, input: { from: unknown; to: unknown; amount: unknown }): Promise<ConversionQuote> {
    const terms = await this.price(parsePair(input));
    return inTransaction(this.deps.prisma, async (tx) => {
      // Serialises the client's quotes, so the cap holds under concurrency.
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`conversion-quotes:${clientId}`}))`;
      const keptSince = new Date(Date.now() - QUOTE_KEPT_MS);
      await tx.conversionQuote.deleteMany({ where: { clientId, usedAt: null, createdAt: { lt: keptSince } } });
      if ((await tx.conversionQuote.count({ where: { clientId, usedAt: null } })) >= MAX_OPEN_QUOTES) {
        throw new AppError("RATE_LIMITED", `At most ${MAX_OPEN_QUOTES} unused quotes at once: use one or wait for them to expire`, { retryAfter: QUOTE_TTL_MS / 1000 });
      }
      return tx.conversionQuote.create({ data: { clientId, ...terms, expiresAt: new Date(Date.now() + QUOTE_TTL_MS) } });
    });
  }

  /** Converts a user's funds, at the quote's rate when `quoteId` names one, else at the current rate. */
  async convert(clientId: string, input: { from: unknown; to: unknown; amount: unknown; userId: unknown; quoteId?: unknown }): Promise<Conversion> {
    const pair = parsePair(input);
    const { userId, quoteId } = parseInput(ConversionRequest, input);
    const user = await this.deps.users.get(clientId, userId, { select: { id: true } });
    const current = quoteId ? undefined : await this.price(pair);
    return inTransaction(this.deps.prisma, async (tx) => {
      const terms = current ?? (await this.redeemQuote(tx, clientId, quoteId!, pair));
      return this.record(prismaSql(tx), clientId, user.id, terms, quoteId ?? null);
    });
  }

  /**
   * For other domains' money flows (a deposit's auto-conversion): prices at the current rate and
   * records the conversion inside the caller's transaction, and returns its journal, which the caller
   * posts in that same transaction together with its own (one lock and one write for them all). The
   * caller has checked the user; the amount must be valid in `from` and convert to more than zero.
   */
  async prepareInTransaction(tx: Sql, input: { clientId: string; userId: string; from: string; to: string; amount: Decimal.Value }) {
    const pair = parsePair({ from: input.from, to: input.to, amount: new Exact(input.amount).toFixed() });
    const { conversion, journal } = await this.create(tx, input.clientId, input.userId, await this.price(pair), null);
    return { conversion, journal, convertedAmount: new Exact(conversion.convertedAmount.toString()) };
  }

  private async price(pair: { from: Currency; to: Currency; amount: Decimal }): Promise<Terms> {
    const mid = await this.deps.fx.midRate(pair.from, pair.to);
    const rate = new Exact(mid).times(Exact.sub(1, FX_SPREAD)).toDecimalPlaces(RATE_DECIMALS, Decimal.ROUND_DOWN);
    const fee = pair.amount.times(CONVERSION_FEE_RATE).toDecimalPlaces(currencyDecimals(pair.from), Decimal.ROUND_DOWN);
    const convertedAmount = pair.amount.minus(fee).times(rate).toDecimalPlaces(currencyDecimals(pair.to), Decimal.ROUND_DOWN);
    if (convertedAmount.isZero()) throw badInput(`amount is too small: it converts to less than the smallest unit of ${pair.to}`);
    return { ...pair, rate, fee, convertedAmount };
  }

  /** The quote's terms, marking it used in the same transaction (a failed conversion leaves it usable). */
  private async redeemQuote(tx: Tx, clientId: string, quoteId: string, pair: { from: Currency; to: Currency; amount: Decimal }): Promise<Terms> {
    const quote = await tx.conversionQuote.findFirst({ where: { id: quoteId, clientId } });
    if (!quote) throw badInput("quoteId: no such quote");
    if (quote.from !== pair.from || quote.to !== pair.to || !pair.amount.equals(quote.amount.toString())) {
      throw badInput("quoteId: the quote is for another from, to or amount");
    }
    // Conditional on still being unused and unexpired: of two concurrent redemptions, one wins.
    const now = new Date();
    const claimed = await tx.conversionQuote.updateMany({ where: { id: quote.id, usedAt: null, expiresAt: { gt: now } }, data: { usedAt: now } });
    if (claimed.count === 0) throw badInput(quote.expiresAt <= now ? "quoteId: the quote has expired" : "quoteId: the quote was already used");
    return {
      ...pair,
      rate: new Exact(quote.rate.toString()),
      fee: new Exact(quote.fee.toString()),
      convertedAmount: new Exact(quote.convertedAmount.toString()),
    };
  }

  private async record(tx: Sql, clientId: string, userId: string, terms: Terms, quoteId: string | null) {
    const { conversion, journal } = await this.create(tx, clientId, userId, terms, quoteId);
    await this.deps.ledger.post(tx, journal);
    return conversion;
  }

  /**
   * The conversion record and its journal (to post). FROM currency: the user gives the amount (the
   * converted part as CONVERSION_OUT, the fee as FEE) to FX and FEES. TO currency: FX gives the
   * converted amount to the user (CONVERSION_IN). The rounding remainder stays with FX.
   */
  private async create(tx: Sql, clientId: string, userId: string, terms: Terms, quoteId: string | null): Promise<{ conversion: Conversion; journal: JournalInput }> {
    const conversion = await insertConversion(tx, clientId, userId, terms, quoteId);
    const user = (currency: Currency) => ({ userId, currency });
    const sold = terms.amount.minus(terms.fee);
    const postings: Posting[] = [
      { account: user(terms.from), amount: sold.negated(), type: "CONVERSION_OUT" },
      { account: { system: "FX", currency: terms.from }, amount: sold, type: "CONVERSION_OUT" },
      { account: { system: "FX", currency: terms.to }, amount: terms.convertedAmount.negated(), type: "CONVERSION_IN" },
      { account: user(terms.to), amount: terms.convertedAmount, type: "CONVERSION_IN" },
    ];
    if (!terms.fee.isZero()) {
      postings.push(
        { account: user(terms.from), amount: terms.fee.negated(), type: "FEE" },
        { account: { system: "FEES", currency: terms.from }, amount: terms.fee, type: "FEE" },
      );
    }
    // In the caller's transaction: the event stands or falls with the journal posted there.
    await recordEvent(tx, { clientId, userId, type: "conversion.completed", object: conversionObject(conversion) });
    return { conversion, journal: { clientId, type: "CONVERSION_OUT", referenceId: conversion.id, postings } };
  }
}
