import { describe, it, expect } from "vitest";
import { validate as isAbaValid } from "abavalidator";
import { clabe } from "clabe-validator";
import { extractIBAN, isValidBIC, isValidIBAN } from "ibantools";
import {
  isValidAbaRouting,
  isValidClabe,
  isValidNuban,
  SandboxFiatProvider,
  SandboxNgnProvider,
  type FiatAccountDetails,
  type NgnAccountDetails,
} from "../../src/providers/banking.js";

const N = 100;
const holderName = "Ada Lovelace";
const fiat = new SandboxFiatProvider();

async function fiatAccounts(currency: string): Promise<FiatAccountDetails[]> {
  return Promise.all(
    Array.from({ length: N }, () => fiat.createVirtualAccount({ currency, holderName }) as Promise<FiatAccountDetails>),
  );
}

/** Independent NUBAN check written out from the CBN specification. */
function nubanOk(bankCode: string, account: string): boolean {
  const digits = (bankCode + account.slice(0, 9)).split("").map(Number);
  const weights = [3, 7, 3, 3, 7, 3, 3, 7, 3, 3, 7, 3];
  const sum = digits.reduce((s, d, i) => s + d * weights[i], 0);
  const check = 10 - (sum % 10);
  return (check === 10 ? 0 : check) === Number(account[9]);
}

describe("NUBAN", () => {
  it("accepts the CBN worked example and rejects a wrong check digit", () => {
    // Bank 011, serial 000001457: 0·3+1·7+1·3 + 0+0+0+0+0 + 1·3+4·3+5·7+7·3 = 81 → 10 − 1 = 9.
    expect(isValidNuban("011", "0000014579")).toBe(true);
    expect(isValidNuban("011", "0000014578")).toBe(false);
    // Bank 058, serial 000000001: 5·7+8·3+1·3 = 62 → 10 − 2 = 8.
    expect(isValidNuban("058", "0000000018")).toBe(true);
    expect(isValidNuban("058", "000000001")).toBe(false);
    expect(isValidNuban("58", "0000000018")).toBe(false);
  });

  it("issues 10-digit NGN accounts whose check digit is right for the bank code", async () => {
    const ngn = new SandboxNgnProvider();
    for (let i = 0; i < N; i++) {
      const a = (await ngn.createVirtualAccount({ currency: "ngn", holderName })) as NgnAccountDetails;
      expect(a.bankCode).toMatch(/^\d{3}$/);
      expect(a.accountNumber).toMatch(/^\d{10}$/);
      expect(nubanOk(a.bankCode, a.accountNumber)).toBe(true);
      expect(a.accountName).toBe(holderName);
      expect(a.bankName).not.toBe("");
    }
  });

  it("refuses currencies it does not serve", async () => {
    await expect(new SandboxNgnProvider().createVirtualAccount({ currency: "USD", holderName })).rejects.toThrow();
    await expect(fiat.createVirtualAccount({ currency: "NGN", holderName })).rejects.toThrow();
  });
});

describe("USD accounts", () => {
  it("carry an ABA routing number that passes its checksum and a 10–12 digit account", async () => {
    for (const a of await fiatAccounts("USD")) {
      expect(isAbaValid(a.routingNumber)).toBe(true);
      expect(a.accountNumber).toMatch(/^\d{10,12}$/);
      expect(a).toMatchObject({ accountHolderName: holderName, accountHolderType: "individual" });
      expect(a.bankAddress).not.toBe("");
    }
  });

  it("validates routing numbers like an independent validator", () => {
    for (const r of ["021000021", "011000015", "121000358", "021000022", "12100035", "abcdefghi"]) {
      expect(isValidAbaRouting(r), r).toBe(isAbaValid(r));
    }
  });
});

describe("EUR accounts", () => {
  it("carry a valid IBAN and BIC", async () => {
    for (const a of await fiatAccounts("EUR")) {
      expect(isValidIBAN(a.accountNumber)).toBe(true);
      expect(extractIBAN(a.accountNumber).countryCode).toBe("DE");
      expect(isValidBIC(a.routingNumber)).toBe(true);
    }
  });
});

describe("MXN accounts", () => {
  it("carry an 18-digit CLABE with a valid check digit, bank and city", async () => {
    for (const a of await fiatAccounts("MXN")) {
      const check = clabe.validate(a.accountNumber);
      expect(check.ok, check.message).toBe(true);
      expect(a.routingNumber).toBe(a.accountNumber.slice(0, 3));
    }
  });

  it("rejects a CLABE with a wrong check digit", () => {
    expect(isValidClabe("002010077777777771")).toBe(true);
    expect(isValidClabe("002010077777777772")).toBe(false);
  });
});

describe("BRL accounts", () => {
  it("carry bank code, branch and a mod-11 checked account", async () => {
    for (const a of await fiatAccounts("BRL")) {
      expect(a.routingNumber).toMatch(/^\d{3}-\d{4}$/);
      const [, account, dv] = a.accountNumber.match(/^(\d{8})-(\d)$/)!;
      const sum = account.split("").reverse().reduce((s, d, i) => s + Number(d) * [2, 3, 4, 5, 6, 7, 8, 9][i], 0);
      const expected = 11 - (sum % 11);
      expect(Number(dv)).toBe(expected >= 10 ? 0 : expected);
    }
  });
});

describe("account numbers", () => {
  it("are random, not repeated", async () => {
    const numbers = (await fiatAccounts("USD")).map((a) => a.accountNumber);
    expect(new Set(numbers).size).toBe(N);
  });
});
