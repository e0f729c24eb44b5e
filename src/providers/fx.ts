import { Decimal } from "decimal.js";

export const CURRENCIES = ["NGN", "USD", "EUR", "MXN", "BRL", "GBP", "USDC", "USDT", "DAI"] as const;
export type Currency = (typeof CURRENCIES)[number];
/** The national currencies among them (the rest are USD stablecoins). */
export const FIAT_CURRENCIES = ["NGN", "USD", "EUR", "MXN", "BRL", "GBP"] as const satisfies readonly Currency[];
export type FiatCurrency = (typeof FIAT_CURRENCIES)[number];

export function isCurrency(value: string): value is Currency {
  return (CURRENCIES as readonly string[]).includes(value);
}

const DECIMALS: Record<Currency, number> = {
  NGN: 2, USD: 2, EUR: 2, MXN: 2, BRL: 2, GBP: 2, USDC: 6, USDT: 6, DAI: 18,
};

export function currencyDecimals(currency: Currency): number {
  return DECIMALS[currency];
}

export interface FxSource {
  /** Units of `to` per one unit of `from`, before any fee. */
  midRate(from: Currency, to: Currency): Promise<Decimal>;
}

/** Rates are kept at the scale of the NUMERIC(38,18) columns that store them. */
export const RATE_DECIMALS = 18;

// Enough significant digits that the quotient is exact to RATE_DECIMALS before rounding.
const Exact = Decimal.clone({ precision: 60, rounding: Decimal.ROUND_HALF_EVEN });

/** Units per one US dollar; stablecoins are pegged at par. */
const USD_RATES: Record<Currency, string> = {
  USD: "1",
  USDC: "1",
  USDT: "1",
  DAI: "1",
  NGN: "1535.25",
  EUR: "0.9215",
  GBP: "0.7842",
  MXN: "18.4370",
  BRL: "5.4625",
};

export class SandboxFxSource implements FxSource {
  async midRate(from: Currency, to: Currency): Promise<Decimal> {
    const rate = new Exact(USD_RATES[to]).div(USD_RATES[from]);
    return new Decimal(rate.toDecimalPlaces(RATE_DECIMALS).toFixed());
  }
}
