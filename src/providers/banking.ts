import { randomInt } from "node:crypto";
import { clabe } from "clabe-validator";
import { composeIBAN, isValidBIC, isValidIBAN } from "ibantools";

export type NgnAccountDetails = {
  bankName: string;
  accountNumber: string;
  accountName: string;
  bankCode: string;
};

export type FiatAccountDetails = {
  bankName: string;
  accountNumber: string;
  routingNumber: string;
  accountHolderName: string;
  accountHolderType: "individual";
  bankAddress: string;
};

export type BankAccountDetails = NgnAccountDetails | FiatAccountDetails;

export interface BankingProvider {
  readonly name: string;
  readonly currencies: readonly string[];
  createVirtualAccount(input: { currency: string; holderName: string }): Promise<BankAccountDetails>;
}

const randomDigits = (count: number) => Array.from({ length: count }, () => randomInt(10)).join("");

const weightedSum = (digits: string, weights: readonly number[]) =>
  [...digits].reduce((sum, d, i) => sum + Number(d) * weights[i % weights.length], 0);

// ---------------------------------------------------------------- validators

/**
 * The institution code as the CBN's 2020 NUBAN revision pads it to 6 digits: a 3-digit (deposit
 * money bank) code after "000", a 5-digit code of another financial institution (microfinance
 * banks, mobile money operators…) after "9".
 */
function paddedInstitutionCode(bankCode: string): string | undefined {
  if (/^\d{3}$/.test(bankCode)) return `000${bankCode}`;
  if (/^\d{5}$/.test(bankCode)) return `9${bankCode}`;
  return undefined;
}

/** CBN NUBAN check digit: weights 3,7,3 repeated over the 6-digit padded code and the 9-digit serial; 10 − (sum mod 10), 10 → 0. */
export function nubanCheckDigit(bankCode: string, serial: string): number {
  const code = paddedInstitutionCode(bankCode);
  if (!code || !/^\d{9}$/.test(serial)) throw new Error("A NUBAN check digit needs a 3- or 5-digit code and a 9-digit serial");
  return (10 - (weightedSum(code + serial, [3, 7, 3]) % 10)) % 10;
}

/** A 10-digit NUBAN (9-digit serial and check digit) for a 3- or 5-digit institution code. */
export function isValidNuban(bankCode: string, accountNumber: string): boolean {
  return (
    paddedInstitutionCode(bankCode) !== undefined &&
    /^\d{10}$/.test(accountNumber) &&
    nubanCheckDigit(bankCode, accountNumber.slice(0, 9)) === Number(accountNumber[9])
  );
}

/** ABA routing number: 9 digits, 3-7-1 weighted sum divisible by 10. */
export function isValidAbaRouting(routingNumber: string): boolean {
  return /^\d{9}$/.test(routingNumber) && weightedSum(routingNumber, [3, 7, 1]) % 10 === 0;
}

function abaCheckDigit(first8: string): number {
  return (10 - (weightedSum(first8, [3, 7, 1]) % 10)) % 10;
}

/** 18 digits, valid check digit, known bank and city codes. */
export function isValidClabe(value: string): boolean {
  return clabe.validate(value).ok;
}

export function isValidIban(value: string): boolean {
  return isValidIBAN(value);
}

export function isValidBic(value: string): boolean {
  return isValidBIC(value);
}

/** Mod-11 (weights 2..9 from the right) account check digit; 10 and 11 map to 0. */
export function brlAccountCheckDigit(account: string): number {
  const sum = [...account].reverse().reduce((s, d, i) => s + Number(d) * (2 + (i % 8)), 0);
  const dv = 11 - (sum % 11);
  return dv >= 10 ? 0 : dv;
}

// ---------------------------------------------------------------- NGN

const NGN_BANK = { name: "Guaranty Trust Bank", code: "058" };

export class SandboxNgnProvider implements BankingProvider {
  readonly name = "sandbox-ngn";
  readonly currencies = ["NGN"] as const;

  async createVirtualAccount(input: { currency: string; holderName: string }): Promise<NgnAccountDetails> {
    assertCurrency(this, input.currency);
    const serial = randomDigits(9);
    return {
      bankName: NGN_BANK.name,
      accountNumber: serial + nubanCheckDigit(NGN_BANK.code, serial),
      accountName: input.holderName,
      bankCode: NGN_BANK.code,
    };
  }
}

// ---------------------------------------------------------------- USD, EUR, MXN, BRL

const USD_ROUTING_PREFIX = "10100301";
const EUR_BLZ = "37040999";
const EUR_BIC = "SBOXDEFFXXX";
const MXN_BANK_CODE = "646"; // STP, the SPEI participant most fintechs issue virtual CLABEs from
const MXN_CITY_CODE = "180"; // Ciudad de México
const BRL_BANK_CODE = "260";
const BRL_BRANCH = "0001";

type FiatIssuer = () => Pick<FiatAccountDetails, "bankName" | "accountNumber" | "routingNumber" | "bankAddress">;

const FIAT_ISSUERS: Record<"USD" | "EUR" | "MXN" | "BRL", FiatIssuer> = {
  USD: () => ({
    bankName: "Sandbox Community Bank",
    accountNumber: String(randomInt(1, 10)) + randomDigits(11),
    routingNumber: USD_ROUTING_PREFIX + abaCheckDigit(USD_ROUTING_PREFIX),
    bankAddress: "1 Sandbox Plaza, New York, NY 10004, United States",
  }),
  EUR: () => ({
    bankName: "Sandbox Bank Europe",
    accountNumber: composeIBAN({ countryCode: "DE", bban: EUR_BLZ + randomDigits(10) })!,
    routingNumber: EUR_BIC,
    bankAddress: "Sandboxstraße 1, 10117 Berlin, Germany",
  }),
  MXN: () => {
    const first17 = MXN_BANK_CODE + MXN_CITY_CODE + randomDigits(11);
    return {
      bankName: "Sistema de Transferencias y Pagos STP",
      accountNumber: first17 + clabe.computeChecksum(first17),
      routingNumber: MXN_BANK_CODE,
      bankAddress: "Av. Insurgentes Sur 1, 03100 Ciudad de México, Mexico",
    };
  },
  BRL: () => {
    const account = randomDigits(8);
    return {
      bankName: "Sandbox Banco Digital",
      accountNumber: `${account}-${brlAccountCheckDigit(account)}`,
      routingNumber: `${BRL_BANK_CODE}-${BRL_BRANCH}`,
      bankAddress: "Avenida Paulista 1000, 01310-100 São Paulo, Brazil",
    };
  },
};

export class SandboxFiatProvider implements BankingProvider {
  readonly name = "sandbox-fiat";
  readonly currencies = ["USD", "EUR", "MXN", "BRL"] as const;

  async createVirtualAccount(input: { currency: string; holderName: string }): Promise<FiatAccountDetails> {
    const currency = assertCurrency(this, input.currency);
    return { ...FIAT_ISSUERS[currency](), accountHolderName: input.holderName, accountHolderType: "individual" };
  }
}

function assertCurrency<C extends string>(provider: { name: string; currencies: readonly C[] }, currency: string): C {
  const upper = currency.toUpperCase();
  if (!(provider.currencies as readonly string[]).includes(upper)) {
    throw new Error(`${provider.name} does not serve ${currency}`);
  }
  return upper as C;
}
