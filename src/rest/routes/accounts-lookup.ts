import { z } from "zod";
import { VirtualAccountFields, virtualAccountBody } from "../../accounts/virtual-account-representation.js";
import { graphql } from "../../graphql/typed.js";
import { LOOKUP_CURRENCIES } from "../../accounts/balance-lookup-service.js";
import { withNumbers } from "../../representation.js";
import { BALANCE_MEANINGS } from "../../ledger/balances.js";
import { doc, named } from "../docs.js";
import { examples } from "../examples.js";
import { code, found, route } from "../route.js";
import { VirtualAccount } from "./virtual-accounts.js";

const BALANCES = ["posted", "pending", "available"] as const;
const threeBalances = {
  posted: doc.money.describe(BALANCE_MEANINGS.posted),
  pending: doc.money.describe(BALANCE_MEANINGS.pending),
  available: doc.money.describe(BALANCE_MEANINGS.available),
};

/**
 * `GET /v1/accounts/{ngn|usd|gbp|eur}/{userId}`. Its `:currency` segment also matches
 * `/v1/accounts/usdc/{userId}`, so this route must come after the USDC account routes.
 */
export const accountLookupRoutes = [
  route({
    method: "GET",
    path: "/v1/accounts/:currency/:userId",
    operation: graphql(`query GetAccountBalance($userId: ID!, $currency: AccountBalanceCurrency!) {
      accountBalance(userId: $userId, currency: $currency) { currency balance posted pending available livemode virtualAccount { ...VirtualAccountFields } }
    }`, [VirtualAccountFields]),
    variables: ({ params }) => ({ userId: params.userId, currency: code(params.currency) }),
    result: ({ accountBalance: account }) => ({
      ...withNumbers(account, ["balance", ...BALANCES]),
      virtualAccount: account.virtualAccount && virtualAccountBody(account.virtualAccount),
    }),
    docs: {
      summary: "The user's balance in a currency, with its virtual account when there is one",
      description: "`balance` is the posted balance; `posted`, `pending` and `available` are the user's three balances in the currency.",
      params: { currency: doc.oneOf(LOOKUP_CURRENCIES, "the balance's currency"), ...doc.userParam },
      response: z.object({ currency: z.string(), balance: doc.money.describe(BALANCE_MEANINGS.balance), ...threeBalances, livemode: doc.livemode, virtualAccount: VirtualAccount.nullable() }),
      errors: ["NOT_FOUND"],
      example: { response: { currency: "NGN", balance: 50000, posted: 50000, pending: 75000, available: 50000, livemode: false, virtualAccount: examples.ngnAccount } },
    },
  }),
];

export const balanceRoutes = [
  route({
    method: "GET",
    path: "/v1/balances/:userId",
    operation: graphql(`query GetUserBalances($id: ID!) { user(id: $id) { id balances { currency posted pending available livemode } } }`),
    variables: ({ params }) => ({ id: params.userId }),
    result: ({ user }) => {
      const { id, balances } = found(user);
      return { userId: id, balances: balances.map((row) => withNumbers(row, BALANCES)) };
    },
    docs: {
      summary: "The user's posted, pending and available balances, one row per currency",
      description:
        "One row per currency the user has an account in or a deposit PENDING in. `posted` is the ledger balance; `pending` adds deposits still " +
        "PENDING and takes off the holds of pending card authorizations; `available` is posted less holds, what every spend checks.",
      params: doc.userParam,
      response: named("UserBalances", z.object({ userId: doc.id, balances: z.array(named("Balances", z.object({ currency: z.string(), ...threeBalances, livemode: doc.livemode }))) })),
      errors: ["NOT_FOUND"],
      example: {
        response: {
          userId: examples.userId,
          balances: [
            { currency: "NGN", posted: 0, pending: 50000, available: 0, livemode: false },
            { currency: "USD", posted: 120, pending: 78, available: 78, livemode: false },
          ],
        },
      },
    },
  }),
];
