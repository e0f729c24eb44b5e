import { Decimal } from "decimal.js";
import { badInput } from "../errors.js";
import { currencyDecimals, type Currency } from "../providers/fx.js";

/**
 * Decimal arithmetic without rounding for money: decimal.js rounds every result to 20 significant
 * digits by default, and a NUMERIC(38,18) value (a DAI balance, say) needs up to 38.
 */
export const Exact = Decimal.clone({ precision: 60 });

/** Far above any real movement, and far below what NUMERIC(38,18) overflows at (10^20), with room for rates. */
const MAX_AMOUNT = new Exact("1e15");
const POSITIVE_DECIMAL = /^\d+(\.\d+)?$/;

const PLAIN_DECIMAL = /^-?\d+(\.\d+)?$/;

/**
 * Decimal text in plain notation, never `1e-8` or `1e+21` (what a Prisma Decimal or decimal.js value,
 * or a number, prints at the extremes). Text already plain is kept as it is (trailing zeros included).
 */
export function plainDecimal(value: unknown): string {
  const text = String(value);
  return PLAIN_DECIMAL.test(text) ? text : new Exact(text).toFixed();
}

/** Every decimal of up to this many significant digits comes through a double (JSON.parse) unchanged. */
const EXACT_DOUBLE_DIGITS = 15;

/**
 * A JSON number as decimal text, when it is sure to be the number that was sent; undefined for a
 * longer one (0.123456789012345678 arrives as 0.12345678901234568), which must come as a string.
 */
export function exactDecimalOf(value: number): string | undefined {
  if (!Number.isFinite(value)) return undefined;
  const decimal = new Decimal(value);
  return decimal.precision() <= EXACT_DOUBLE_DIGITS ? decimal.toFixed() : undefined;
}

/**
 * A money amount in its currency: a positive decimal (string, or a JSON number as REST sends it) with
 * no more decimals than the currency has. Anything else is a 400 naming the field.
 */
export function parseAmount(value: unknown, currency: Currency, field = "amount", options: { zeroAllowed?: boolean } = {}): Decimal {
  const text = typeof value === "number" ? exactDecimalOf(value) : typeof value === "string" ? value.trim() : "";
  if (text === undefined) throw badInput(`${field} has more digits than a JSON number carries exactly; send it as a string`);
  if (!POSITIVE_DECIMAL.test(text)) throw badInput(`${field} must be a ${options.zeroAllowed ? "non-negative" : "positive"} decimal number`);
  const amount = new Exact(text);
  if (amount.isZero() && !options.zeroAllowed) throw badInput(`${field} must be greater than zero`);
  const decimals = currencyDecimals(currency);
  if (amount.decimalPlaces() > decimals) throw badInput(`${field} has more than ${decimals} decimals, the precision of ${currency}`);
  if (amount.greaterThanOrEqualTo(MAX_AMOUNT)) throw badInput(`${field} is too large`);
  return amount;
}
