import type { ApiKey, CardTransaction, Conversion, Deposit, User, VirtualAccount, Withdrawal } from "../generated/prisma/client.js";
import { pickKeys } from "../rest/pick-keys.js";
import { API_KEY_KEYS } from "../rest/routes/api-keys.js";
import { asContractTransaction } from "../rest/routes/cards.js";
import { conversionBody } from "../rest/routes/conversion.js";
import { depositBody } from "../rest/routes/deposits.js";
import { USER_KEYS } from "../rest/routes/users.js";
import { virtualAccountBody } from "../rest/routes/virtual-accounts.js";
import { withdrawalBody } from "../rest/routes/withdrawals.js";
import { maskedDestination } from "../withdrawals/service.js";

type Row = Record<string, unknown>;

/** A row's values as GraphQL serialises them (exact decimal strings, ISO timestamps), which the REST shapes expect. */
function asGraphQLValues(row: object): Row {
  return Object.fromEntries(
    Object.entries(row).map(([key, value]) => {
      if (value instanceof Date) return [key, value.toISOString()];
      if (typeof value === "object" && value !== null && "toFixed" in value) return [key, String(value)];
      return [key, value];
    }),
  );
}

/**
 * Each resource as REST shows it, through the REST routes' own shaping: the `data.object` of its events.
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
  apiKey: (key: ApiKey) => pickKeys(asGraphQLValues(key), API_KEY_KEYS),
};
