import type { LedgerService } from "../ledger/service.js";
import type { UserService } from "../users/service.js";
import { parseCurrency } from "../validation.js";

/** The currencies `/v1/accounts/{currency}/{userId}` answers for (GBP has a balance but never a virtual account). */
export const LOOKUP_CURRENCIES = ["NGN", "USD", "GBP", "EUR"] as const;
type LookupCurrency = (typeof LOOKUP_CURRENCIES)[number];

/** The user and currency travel along, so GraphQL can load the virtual account with its own selection. */
export type AccountBalance = { clientId: string; userId: string; currency: LookupCurrency; balance: string; posted: string; pending: string; available: string };

/** A user's account in one fiat currency: its balances (the virtual account that feeds it is loaded by the caller). */
export class BalanceLookupService {
  constructor(private readonly deps: { users: UserService; ledger: LedgerService }) {}

  async lookup(clientId: string, userId: string, currencyCode: string): Promise<AccountBalance> {
    const currency = parseCurrency(currencyCode, LOOKUP_CURRENCIES);
    const user = await this.deps.users.get(clientId, userId, { select: { id: true } });
    const [balances] = await this.deps.ledger.balances(clientId, user.id, currency);
    const { posted, pending, available } = balances ?? { posted: "0", pending: "0", available: "0" };
    return { clientId, userId: user.id, currency, balance: posted, posted, pending, available };
  }
}
