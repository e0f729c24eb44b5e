import { z } from "zod";
import { graphql } from "../../graphql/typed.js";
import { withNumbers } from "../../representation.js";
import { doc, named } from "../docs.js";
import { route } from "../route.js";

const ClientBalance = named("ClientBalance", z.object({
  currency: z.string(),
  posted: doc.money.describe("the revenue's ledger balance: developer fees charged, less those refunded by failed withdrawals"),
  pending: doc.money.describe("equal to posted: revenue has no pending credits or holds"),
  available: doc.money.describe("equal to posted: revenue has no holds"),
  livemode: doc.livemode,
}));

/**
 * `GET /v1/balances`: the client's own revenue. (`/v1/balances/{userId}`, a user's balances, is
 * another route: Express matches the two paths apart by their segment count.)
 */
export const clientBalanceRoutes = [
  route({
    method: "GET",
    path: "/v1/balances",
    operation: graphql(`query GetClientBalances { clientBalances { currency posted pending available livemode } }`),
    result: (data) => ({ balances: data.clientBalances.map((balance) => withNumbers(balance, ["posted", "pending", "available"])) }),
    docs: {
      summary: "The client's revenue from developer fees, per currency",
      description:
        "Developer fees (developerFeePercent on virtual accounts, developerFee on withdrawals) are credited to the client's revenue account in the fee's currency. One row per currency the client has earned in; an empty list before the first fee.",
      response: z.object({ balances: z.array(ClientBalance) }),
      example: { response: { balances: [{ currency: "NGN", posted: 150, pending: 150, available: 150, livemode: false }, { currency: "USDC", posted: 4.5, pending: 4.5, available: 4.5, livemode: false }] } },
    },
  }),
];
