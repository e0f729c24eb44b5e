import { Decimal } from "decimal.js";
import { badInput } from "../errors.js";
import { Exact, exactDecimalOf, parseAmount } from "../money/amount.js";
import { feePostings, type Posting } from "../ledger/types.js";
import { currencyDecimals, type Currency } from "../providers/fx.js";

/**
 * Developer fees: what a client charges its own users (Bridge's developer_fee and
 * developer_fee_percent). Each is a FEE posting pair: the user's balance against the client's
 * revenue (CLIENT_REVENUE) in the same currency.
 */

export const MAX_DEVELOPER_FEE_PERCENT = 10;
const PERCENT = /^\d+(\.\d{1,2})?$/;

/** A virtual account's developerFeePercent: 0 to 10 with at most 2 decimals (default 0). */
export function parseDeveloperFeePercent(value: unknown): Decimal {
  if (value === undefined || value === null) return new Exact(0);
  const text = typeof value === "number" ? exactDecimalOf(value) : typeof value === "string" ? value.trim() : undefined;
  if (text === undefined || !PERCENT.test(text) || new Exact(text).greaterThan(MAX_DEVELOPER_FEE_PERCENT)) {
    throw badInput(`developerFeePercent must be a number from 0 to ${MAX_DEVELOPER_FEE_PERCENT} with at most 2 decimals`);
  }
  return new Exact(text);
}

/** A withdrawal's developerFee: ≥ 0 (0 accepted, the default) in the withdrawal's currency and its precision. */
export function parseDeveloperFee(value: unknown, currency: Currency): Decimal {
  if (value === undefined || value === null) return new Exact(0);
  return parseAmount(value, currency, "developerFee", { zeroAllowed: true });
}

/** The percentage of an amount, rounded down to the currency's precision (never more than the user agreed to). */
export function percentOf(amount: Decimal, percent: Decimal.Value, currency: Currency): Decimal {
  return amount.times(percent).dividedBy(100).toDecimalPlaces(currencyDecimals(currency), Decimal.ROUND_DOWN);
}

/** The FEE postings of a developer fee (none when it is zero: a posting is never zero). */
export const developerFeePostings = (userId: string, currency: string, fee: Decimal): Posting[] => feePostings(userId, currency, fee, "CLIENT_REVENUE");
