import { z } from "zod";
import { VirtualAccountFields, virtualAccountBody } from "../../accounts/virtual-account-representation.js";
import { graphql } from "../../graphql/typed.js";
import { LOOKUP_CURRENCIES } from "../../accounts/balance-lookup-service.js";
import { withNumbers } from "../../representation.js";
import { doc } from "../docs.js";
import { examples } from "../examples.js";
import { code, route } from "../route.js";
import { VirtualAccount } from "./virtual-accounts.js";

/**
 * `GET /v1/accounts/{ngn|usd|gbp|eur}/{userId}`. Its `:currency` segment also matches
 * `/v1/accounts/usdc/{userId}`, so this route must come after the USDC account routes.
 */
export const accountLookupRoutes = [
  route({
    method: "GET",
    path: "/v1/accounts/:currency/:userId",
    operation: graphql(`query ($userId: ID!, $currency: AccountBalanceCurrency!) {
      accountBalance(userId: $userId, currency: $currency) { currency balance virtualAccount { ...VirtualAccountFields } }
    }`, [VirtualAccountFields]),
    variables: ({ params }) => ({ userId: params.userId, currency: code(params.currency) }),
    result: ({ accountBalance: account }) => ({
      ...withNumbers(account, ["balance"]),
      virtualAccount: account.virtualAccount && virtualAccountBody(account.virtualAccount),
    }),
    docs: {
      summary: "The user's balance in a currency, with its virtual account when there is one",
      params: { currency: doc.oneOf(LOOKUP_CURRENCIES, "the balance's currency"), ...doc.userParam },
      response: z.object({ currency: z.string(), balance: doc.money, virtualAccount: VirtualAccount.nullable() }),
      errors: ["NOT_FOUND"],
      example: { response: { currency: "NGN", balance: 50000, virtualAccount: examples.ngnAccount } },
    },
  }),
];
