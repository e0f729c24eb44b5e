import { describe, it, expect } from "vitest";
import { CURRENCIES, currencyDecimals, isCurrency, SandboxFxSource } from "../../src/providers/fx.js";

const fx = new SandboxFxSource();

/** a/b rounded half-even to 18 decimals, with plain BigInt arithmetic (inputs are decimal strings). */
function divide18(a: string, b: string): string {
  const scale = (s: string) => (s.split(".")[1] ?? "").length;
  const int = (s: string, to: number) => BigInt(s.replace(".", "") + "0".repeat(to - scale(s)));
  const p = Math.max(scale(a), scale(b));
  const num = int(a, p) * 10n ** 18n;
  const den = int(b, p);
  let q = num / den;
  const r = num % den;
  if (2n * r > den || (2n * r === den && q % 2n === 1n)) q += 1n;
  const s = q.toString().padStart(19, "0");
  return `${s.slice(0, -18)}.${s.slice(-18)}`.replace(/\.?0+$/, "");
}

describe("fx", () => {
  it("knows the nine currencies and their precision", () => {
    expect(CURRENCIES).toEqual(["NGN", "USD", "EUR", "MXN", "BRL", "GBP", "USDC", "USDT", "DAI"]);
    expect(isCurrency("EUR")).toBe(true);
    expect(isCurrency("eur")).toBe(false);
    expect(isCurrency("JPY")).toBe(false);
    expect(currencyDecimals("NGN")).toBe(2);
    expect(currencyDecimals("USDC")).toBe(6);
    expect(currencyDecimals("USDT")).toBe(6);
    expect(currencyDecimals("DAI")).toBe(18);
  });

  it("prices stablecoins at par with USD and a currency at 1 against itself", async () => {
    for (const [a, b] of [["USD", "USDC"], ["USDC", "USDT"], ["DAI", "USD"], ["NGN", "NGN"]] as const) {
      expect((await fx.midRate(a, b)).toFixed()).toBe("1");
    }
  });

  it("computes cross rates through USD exactly, to 18 decimals", async () => {
    const usdNgn = (await fx.midRate("USD", "NGN")).toFixed();
    const usdEur = (await fx.midRate("USD", "EUR")).toFixed();
    const eurNgn = await fx.midRate("EUR", "NGN");
    expect(eurNgn.toFixed()).toBe(divide18(usdNgn, usdEur));
    expect((await fx.midRate("EUR", "USD")).toFixed()).toBe(divide18("1", usdEur));
    expect((await fx.midRate("NGN", "BRL")).toFixed()).toBe(
      divide18((await fx.midRate("USD", "BRL")).toFixed(), usdNgn),
    );
    // EUR→USD × USD→NGN agrees with EUR→NGN up to the rounding of EUR→USD at 18 decimals.
    const viaUsd = (await fx.midRate("EUR", "USD")).times(usdNgn);
    expect(viaUsd.minus(eurNgn).abs().lte("1e-15")).toBe(true);
  });

  it("gives realistic magnitudes", async () => {
    const usdNgn = await fx.midRate("USD", "NGN");
    expect(usdNgn.gt(1000) && usdNgn.lt(3000)).toBe(true);
    expect((await fx.midRate("GBP", "USD")).gt(1)).toBe(true);
    expect((await fx.midRate("USD", "MXN")).gt(10)).toBe(true);
  });
});
