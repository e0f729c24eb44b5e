import type { ApiKey, CardAuthorization, CardTransaction, Conversion, Deposit, User, VirtualAccount, Withdrawal } from "../generated/prisma/client.js";
import { virtualAccountBody } from "../accounts/virtual-account-representation.js";
import { cardAuthorizationBody } from "../cards/authorization-representation.js";
import { asContractTransaction } from "../cards/representation.js";
import { conversionBody } from "../conversion/representation.js";
import { depositBody } from "../deposits/representation.js";
import { storedPermissions } from "../caller/permissions.js";
import { API_KEY_KEYS, shownAllowedIps } from "../keys/representation.js";
import { pickKeys } from "../representation.js";
import { USER_KEYS } from "../users/representation.js";
import { maskedDestination, withdrawalBody } from "../withdrawals/representation.js";

type Row = Record<string, unknown>;

/** A row's values as GraphQL serialises them (exact decimal strings, ISO timestamps), which the REST shapes expect. */
function asGraphQLValues(row: object): Row {
  return Object.fromEntries(
    Object.entries(row).map(([key, value]) => {
      if (value instanceof Date) return [key, value.toISOString()];
      // A Decimal (metadata, a plain object, may hold a "toFixed" key, but never a function).
      if (typeof value === "object" && value !== null && typeof (value as { toFixed?: unknown }).toFixed === "function") return [key, String(value)];
      return [key, value];
    }),
  );
}

/**
 * Each resource as REST shows it, through the representation modules the REST routes use too: the `data.object` of its events.
 * Card transactions add the userId the contract's transaction list leaves implicit.
 */
export const eventObject = {
  user: (user: User) => pickKeys(asGraphQLValues(user), USER_KEYS),
  virtualAccount: (account: VirtualAccount) => virtualAccountBody(asGraphQLValues(account)),
  deposit: (deposit: Deposit) => depositBody(asGraphQLValues(deposit)),
  withdrawal: (withdrawal: Withdrawal) => withdrawalBody({ ...asGraphQLValues(withdrawal), destination: maskedDestination(withdrawal) }),
  conversion: (conversion: Conversion) => conversionBody(asGraphQLValues(conversion)),
  cardTransaction: (transaction: CardTransaction) => ({
    userId: transaction.userId,
    ...asContractTransaction(asGraphQLValues(transaction) as Parameters<typeof asContractTransaction>[0]),
  }),
  cardAuthorization: (authorization: CardAuthorization) => cardAuthorizationBody(asGraphQLValues(authorization)),
  apiKey: (key: Omit<ApiKey, "hash">) =>
    pickKeys({ ...asGraphQLValues(key), permissions: storedPermissions(key.permissions), allowedIps: shownAllowedIps(key.allowedIps) }, API_KEY_KEYS),
};
