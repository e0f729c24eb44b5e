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

/** The 2020 revision written out: the code padded to 6 digits ("000" + 3 or "9" + 5), weights 3,7,3 over 15 digits. */
function nubanOk2020(bankCode: string, serial: string): number {
  const padded = bankCode.length === 3 ? `000${bankCode}` : `9${bankCode}`;
  const weights = [3, 7, 3, 3, 7, 3, 3, 7, 3, 3, 7, 3, 3, 7, 3];
  const sum = [...(padded + serial)].reduce((s, d, i) => s + Number(d) * weights[i], 0);
  return (10 - (sum % 10)) % 10;
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

  it("takes 5-digit institution codes under the 2020 revision: the code after 9, weights 3,7,3 over 15 digits", () => {
    // Kuda MFB 50211, serial 123456789: 950211123456789 · 3,7,3… = 27+35+0+6+7+3+3+14+9+12+35+18+21+56+27 = 273 → 10 − 3 = 7.
    expect(isValidNuban("50211", "1234567897")).toBe(true);
    for (const wrong of ["1234567890", "1234567891", "1234567896", "1234567898"]) expect(isValidNuban("50211", wrong)).toBe(false);
    // Moniepoint MFB 50515, serial 987654321: 950515987654321 → 27+35+0+15+7+15+27+56+21+18+35+12+9+14+3 = 294 → 10 − 4 = 6.
    expect(isValidNuban("50515", "9876543216")).toBe(true);
    expect(isValidNuban("50515", "9876543219")).toBe(false);
    // A 3-digit code padded with 000 gives the check digit of the original 12-digit rule (weights land the same).
    expect(isValidNuban("058", "0123456785")).toBe(true);
    for (const code of ["5021", "502110", "", "05a"]) expect(isValidNuban(code, "1234567897")).toBe(false);
    for (let serial = 0; serial < 200; serial++) {
      const digits = String(serial * 4_999_991).padStart(9, "0").slice(-9);
      for (const code of ["044", "50211", "51318"]) {
        const check = nubanOk2020(code, digits);
        expect(isValidNuban(code, `${digits}${check}`)).toBe(true);
        expect(isValidNuban(code, `${digits}${(check + 1) % 10}`)).toBe(false);
      }
    }
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
