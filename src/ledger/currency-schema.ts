import { builder } from "../graphql/builder.js";
import { CURRENCIES, FIAT_CURRENCIES } from "../providers/fx.js";

export const CurrencyEnum = builder.enumType("Currency", {
  description: "Every currency a balance can hold: fiat, and the USD stablecoins USDC, USDT and DAI.",
  values: CURRENCIES,
});

export const FiatCurrencyEnum = builder.enumType("FiatCurrency", { description: "The national currencies.", values: FIAT_CURRENCIES });
