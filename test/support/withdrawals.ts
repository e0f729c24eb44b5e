import type { Tenant, TestServer } from "./server.js";
import { createUser } from "./http.js";
import { fund } from "./ledger.js";

/** Real-format bank details that pass their checksums. */
export const BANK_ACCOUNTS = {
  USD: { account: "123456789", routing: "011000015", type: "checking" },
  EUR: { account: "DE89 3704 0044 0532 0130 00", routing: "COBADEFFXXX", type: "savings" },
  MXN: { account: "002010077777777771", routing: "002", type: "checking" },
  BRL: { account: "12345678-9", routing: "260-0001", type: "checking" },
} as const;

export const NGN_ACCOUNT = { accountNumber: "0123456785", bankCode: "058", accountName: "Ada Lovelace", bankName: "Guaranty Trust Bank" };
/** An outside wallet (never a token contract, a treasury or a deposit address: those are refused as destinations). */
export const USDC_ADDRESS = "0x71C7656EC7ab88b098defB751B7401B5f6d8976F";

export const WITHDRAWAL_KEYS = ["reference", "userId", "type", "currency", "amount", "fee", "status", "destination", "failureReason", "returnReason", "createdAt", "updatedAt", "metadata", "livemode"];

/** The account holder of every test user: withdrawals to a bank must name the user. */
export const HOLDER = { firstName: "Ada", lastName: "Lovelace", dob: "1990-05-17" };

export async function fundedUser(server: TestServer, tenant: Tenant, currency: string, amount: string): Promise<string> {
  const userId = await createUser(server, tenant, HOLDER);
  await fund(server, tenant.clientId, userId, currency, amount);
  return userId;
}

export const bankWithdrawalBody = (userId: string, currency: keyof typeof BANK_ACCOUNTS, amount: unknown) => ({
  userId,
  ...HOLDER,
  amount,
  bankAccount: BANK_ACCOUNTS[currency],
});

export const balanceOf = async (server: TestServer, tenant: Tenant, userId: string, currency: string) =>
  (await server.app.services.ledger.balance(tenant.clientId, userId, currency)).toFixed();

/** The sandbox helpers of a withdrawal: REST's path segment and GraphQL's mutation. */
export type WithdrawalAction = "process" | "complete" | "fail" | "return";
export const WITHDRAWAL_MUTATIONS: Record<WithdrawalAction, string> = {
  process: "processWithdrawal",
  complete: "completeWithdrawal",
  fail: "failWithdrawal",
  return: "returnWithdrawal",
};
