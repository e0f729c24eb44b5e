import { z } from "zod";
import { badInput } from "../errors.js";
import { metadataChanges } from "../metadata.js";
import { brlAccountCheckDigit, isValidAbaRouting, isValidBic, isValidClabe, isValidIban, isValidNuban } from "../providers/banking.js";
import { parsePixKey, parseTaxId, PIX_KEY_TYPES, type PixKey } from "../providers/brazil.js";
import { NETWORK_NAMES, networkByName } from "../providers/chains.js";
import { evmAddress, parseInput, uuid } from "../validation.js";

export const BANK_CURRENCIES = ["USD", "EUR", "MXN", "BRL"] as const;
export type BankCurrency = (typeof BANK_CURRENCIES)[number];
export const BANK_CURRENCY_NAMES: Record<BankCurrency, string> = { USD: "US Dollar", EUR: "Euro", MXN: "Mexican Peso", BRL: "Brazilian Real" };

const text = (field: string, max = 100) =>
  z
    .string({ error: `${field} is required` })
    .trim()
    .min(1, `${field} must be 1 to ${max} characters`)
    .max(max, `${field} must be 1 to ${max} characters`);

const bankCurrency = z
  .string({ error: `currency must be one of ${BANK_CURRENCIES.join(", ")}` })
  .transform((value) => value.trim().toUpperCase())
  .pipe(z.enum(BANK_CURRENCIES, { error: `Unsupported currency: must be one of ${BANK_CURRENCIES.join(", ")}` }));

export const BankWithdrawal = z.object({
  userId: uuid("userId"),
  firstName: text("firstName"),
  lastName: text("lastName"),
  dob: z.string({ error: "dob is required" }).regex(/^\d{4}-\d{2}-\d{2}$/, "dob must be a date YYYY-MM-DD"),
  amount: z.unknown(),
  developerFee: z.unknown().optional(),
  bankAccount: z
    .object(
      {
        account: text("bankAccount.account", 40),
        routing: text("bankAccount.routing", 20),
        type: z.enum(["checking", "savings"], { error: "bankAccount.type must be checking or savings" }),
      },
      { error: "bankAccount must be an object {account, routing, type}" },
    )
    .nullish()
    .describe("required for USD, EUR and MXN; for BRL, either this or pix"),
  pix: z
    .object(
      {
        keyType: z.enum(PIX_KEY_TYPES, { error: `pix.keyType must be one of ${PIX_KEY_TYPES.join(", ")}` }),
        key: z.string({ error: "pix.key is required" }),
      },
      { error: "pix must be an object {keyType, key}" },
    )
    .nullish()
    .describe("BRL only, instead of bankAccount: the recipient's Pix key"),
  taxId: z
    .string({ error: "taxId must be text: a CPF or CNPJ" })
    .nullish()
    .meta({ description: "BRL only: the recipient's CPF or CNPJ (check digits validated); required with pix", examples: ["52998224725"] }),
  metadata: metadataChanges,
});

export const NgnWithdrawal = z.object({
  userId: uuid("userId"),
  amount: z.unknown(),
  developerFee: z.unknown().optional(),
  accountNumber: z.string({ error: "accountNumber is required" }).trim().regex(/^\d{10}$/, "accountNumber must be a 10-digit NUBAN"),
  bankCode: z
    .string({ error: "bankCode is required" })
    .trim()
    .regex(/^(\d{3}|\d{5})$/, "bankCode must be a 3-digit bank code or a 5-digit code of another financial institution"),
  accountName: text("accountName"),
  bankName: text("bankName").nullish(),
  narration: text("narration").nullish(),
  metadata: metadataChanges,
});


export const UsdcWithdrawal = z.object({
  userId: uuid("userId"),
  amount: z.unknown(),
  developerFee: z.unknown().optional(),
  walletAddress: evmAddress("walletAddress"),
  network: z.string({ error: "network is required" }),
  chainId: z.number({ error: "chainId is required" }).int("chainId must be an integer"),
  metadata: metadataChanges,
});

export type BankAccount = { account: string; routing: string; type: "checking" | "savings" };

const compact = (value: string) => value.replace(/\s+/g, "").toUpperCase();

/**
 * Per currency: checks the account and routing and returns them normalised.
 * MXN: the routing must be the CLABE's own 3-digit bank code. BRL: routing is the 3-digit bank code
 * and the 4-digit branch ("260-0001" or "2600001"), the account its digits and a mod-11 check digit
 * ("12345678-9" or "123456789"); both are stored in the hyphenated form.
 */
const BANK_RULES: Record<BankCurrency, (account: BankAccount) => BankAccount> = {
  USD: (a) => {
    if (!/^\d{4,17}$/.test(a.account)) throw badInput("bankAccount.account must be 4 to 17 digits");
    if (!isValidAbaRouting(a.routing)) throw badInput("bankAccount.routing must be a 9-digit ABA routing number with a valid checksum");
    return a;
  },
  EUR: (a) => {
    const iban = compact(a.account);
    const bic = compact(a.routing);
    if (!isValidIban(iban)) throw badInput("bankAccount.account must be a valid IBAN");
    if (!isValidBic(bic)) throw badInput("bankAccount.routing must be a valid BIC");
    return { ...a, account: iban, routing: bic };
  },
  MXN: (a) => {
    if (!/^\d{18}$/.test(a.account) || !isValidClabe(a.account)) throw badInput("bankAccount.account must be an 18-digit CLABE with a valid check digit");
    if (a.routing !== a.account.slice(0, 3)) throw badInput("bankAccount.routing must be the CLABE's 3-digit bank code");
    return a;
  },
  BRL: (a) => {
    const routing = /^(\d{3})-?(\d{4})$/.exec(a.routing);
    if (!routing) throw badInput("bankAccount.routing must be the 3-digit bank code and the 4-digit branch, such as 260-0001");
    const account = /^(\d{1,12})-?(\d)$/.exec(a.account);
    if (!account || brlAccountCheckDigit(account[1]) !== Number(account[2])) {
      throw badInput("bankAccount.account must be the account number and its check digit, such as 12345678-9");
    }
    return { ...a, account: `${account[1]}-${account[2]}`, routing: `${routing[1]}-${routing[2]}` };
  },
};

export function parseBankCurrency(currency: unknown): BankCurrency {
  return parseInput(bankCurrency, currency);
}

/** Where a bank withdrawal goes, as stored: a bank account, or (BRL) a Pix key; BRL adds the recipient's tax id when given. */
export type BankDestination = (BankAccount | { pix: PixKey }) & { taxId?: string };

export function parseBankWithdrawal(currency: BankCurrency, input: unknown) {
  const { bankAccount, pix, taxId, ...request } = parseInput(BankWithdrawal, input);
  return { ...request, destination: bankDestination(currency, { bankAccount, pix, taxId }) };
}

function bankDestination(
  currency: BankCurrency,
  given: { bankAccount?: BankAccount | null; pix?: { keyType: PixKey["keyType"]; key: string } | null; taxId?: string | null },
): BankDestination {
  if (currency !== "BRL") {
    if (given.pix != null) throw badInput("pix: only BRL withdrawals take a Pix key");
    if (given.taxId != null) throw badInput("taxId: only BRL withdrawals take a taxId");
    if (given.bankAccount == null) throw badInput("bankAccount is required");
    return BANK_RULES[currency](given.bankAccount);
  }
  if (given.pix != null && given.bankAccount != null) throw badInput("Send either pix or bankAccount, not both");
  const taxId = given.taxId == null ? undefined : parseTaxId(given.taxId);
  if (given.pix != null) {
    if (taxId === undefined) throw badInput("taxId is required with pix: the recipient's CPF or CNPJ");
    return { pix: parsePixKey(given.pix), taxId };
  }
  if (given.bankAccount == null) throw badInput("bankAccount or pix is required");
  return { ...BANK_RULES.BRL(given.bankAccount), ...(taxId === undefined ? {} : { taxId }) };
}

export function parseNgnWithdrawal(input: unknown) {
  const request = parseInput(NgnWithdrawal, input);
  if (!isValidNuban(request.bankCode, request.accountNumber)) throw badInput("accountNumber is not a valid NUBAN for bankCode");
  return request;
}

/**
 * `chainIdOf`: a network's chain id as this deployment runs it (a live network's is its RPC's;
 * undefined while that RPC has not answered).
 */
export function parseUsdcWithdrawal(input: unknown, chainIdOf: (network: string) => number | undefined) {
  const request = parseInput(UsdcWithdrawal, input);
  const network = networkByName(request.network);
  if (!network) throw badInput(`network must be one of ${NETWORK_NAMES.join(", ")}`);
  const chainId = chainIdOf(network.name);
  if (chainId === undefined) throw badInput(`chainId: ${network.name} is live and its RPC has not reported its chain id yet; retry shortly`);
  if (chainId !== request.chainId) throw badInput(`chainId must be ${chainId} for ${network.name}`);
  return { ...request, network: { name: network.name, chainId } };
}
