import { getPixKeyInfo, isValidCnpj, isValidCpf, parseCnpj } from "@brazilian-utils/brazilian-utils";
import { badInput } from "../errors.js";

/**
 * Brazilian identifiers through @brazilian-utils/brazilian-utils (its check-digit rules are checked
 * against the published algorithms in test/providers/brazil.test.ts). CNPJs are read in both the
 * numeric and the alphanumeric form the Receita Federal issues from July 2026.
 */
export const PIX_KEY_TYPES = ["CPF", "CNPJ", "EMAIL", "PHONE", "EVP"] as const;
export type PixKeyType = (typeof PIX_KEY_TYPES)[number];
export type PixKey = { keyType: PixKeyType; key: string };

const CNPJ_FORMAT = { version: 2 } as const;
const digitsOf = (value: string) => value.replace(/\D/g, "");

/** A CPF (11 digits, masked or not) with valid check digits, as its 11 digits. */
const cpfOf = (value: string) => (isValidCpf(value) ? digitsOf(value) : undefined);

/** A CNPJ (14 characters, masked or not; numeric or alphanumeric) with valid check digits, unmasked and upper-case. */
const cnpjOf = (value: string) => (isValidCnpj(value, CNPJ_FORMAT) ? parseCnpj(value, CNPJ_FORMAT) : undefined);

/** The recipient's CPF or CNPJ, in its plain form; anything else is a 400 naming taxId. */
export function parseTaxId(value: string): string {
  const taxId = cpfOf(value) ?? cnpjOf(value);
  if (!taxId) throw badInput("taxId must be a CPF (11 digits) or a CNPJ (14 characters) with valid check digits");
  return taxId;
}

/** The key as the DICT registers it, when the library reads it as that type. */
const dictForm = (key: string, type: "email" | "phone" | "evp") => {
  const info = getPixKeyInfo(key);
  return info?.type === type ? info.value : undefined;
};

/** Each key type's rule; every refusal is a 400 naming pix.key. */
const PIX_KEY_RULES: Record<PixKeyType, { read: (key: string) => string | undefined; form: string }> = {
  CPF: { read: cpfOf, form: "a CPF with valid check digits (11 digits, 123.456.789-09 accepted)" },
  CNPJ: { read: cnpjOf, form: "a CNPJ with valid check digits (14 characters, 12.345.678/0001-95 accepted)" },
  EMAIL: { read: (key) => dictForm(key, "email"), form: "an e-mail address of at most 77 characters" },
  // Mobile numbers only (the DICT registers no landline), written exactly in E.164: +55, area code, number.
  PHONE: { read: (key) => (dictForm(key, "phone") === key ? key : undefined), form: "a Brazilian mobile number in E.164 form, such as +5511987654321" },
  // Written exactly as the DICT issues it: a lower-case UUID.
  EVP: { read: (key) => (dictForm(key, "evp") === key ? key : undefined), form: "a random key (EVP): a lower-case UUID" },
};

export function parsePixKey(pix: PixKey): PixKey {
  const rule = PIX_KEY_RULES[pix.keyType];
  const key = rule.read(pix.key.trim());
  if (!key) throw badInput(`pix.key must be ${rule.form} for keyType ${pix.keyType}`);
  return { keyType: pix.keyType, key };
}

/**
 * What the API shows of a Pix key: a CPF as the Central Bank's masked form (***.456.789-**), the
 * ends of the others; never a whole key.
 */
export function maskedPixKey({ keyType, key }: PixKey): string {
  switch (keyType) {
    case "CPF":
      return `***.${key.slice(3, 6)}.${key.slice(6, 9)}-**`;
    case "EMAIL": {
      const [local, domain] = key.split("@");
      return `${local.slice(0, 1)}***@${domain}`;
    }
    case "PHONE":
      return `+55*******${key.slice(-4)}`;
    default:
      return `****${key.slice(-4)}`;
  }
}
