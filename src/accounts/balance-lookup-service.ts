import { badInput } from "../errors.js";
import type { LedgerService } from "../ledger/service.js";
import type { UserService } from "../users/service.js";

/** The currencies `/v1/accounts/{currency}/{userId}` answers for (GBP has a balance but never a virtual account). */
export const LOOKUP_CURRENCIES = ["NGN", "USD", "GBP", "EUR"] as const;
type LookupCurrency = (typeof LOOKUP_CURRENCIES)[number];

/** The user and currency travel along, so GraphQL can load the virtual account with its own selection. */
export type AccountBalance = { clientId: string; userId: string; currency: LookupCurrency; balance: string };

function parseLookupCurrency(value: string): LookupCurrency {
  const supported = LOOKUP_CURRENCIES.find((currency) => currency === value.toUpperCase());
  if (!supported) throw badInput(`Unsupported currency ${value}; supported: ${LOOKUP_CURRENCIES.join(", ")}`);
  return supported;
}

/** A user's account in one fiat currency: its ledger balance (the virtual account that feeds it is loaded by the caller). */
export class BalanceLookupService {
  constructor(private readonly deps: { users: UserService; ledger: LedgerService }) {}

  async lookup(clientId: string, userId: string, currencyCode: string): Promise<AccountBalance> {
    const currency = parseLookupCurrency(currencyCode);
    const user = await this.deps.users.get(clientId, userId, { select: { id: true } });
    const balance = await this.deps.ledger.balance(clientId, user.id, currency);
    return { clientId, userId: user.id, currency, balance: balance.toFixed() };
  }
}
