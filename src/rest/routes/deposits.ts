import { z } from "zod";
import { DepositFields, depositBody } from "../../deposits/representation.js";
import { graphql } from "../../graphql/typed.js";
import { doc, named } from "../docs.js";
import { examples } from "../examples.js";
import { found, integer, route } from "../route.js";

export const Deposit = named("Deposit", z.object({
  id: doc.id,
  userId: doc.id,
  eventId: z.string().describe("the provider's event reference"),
  amount: doc.money,
  status: z.string().describe("PENDING, COMPLETED or FAILED"),
  currency: z.string().describe("fiat code (NGN, …) or token (USDC, …)"),
  createdAt: doc.timestamp,
  updatedAt: doc.timestamp,
  paymentReference: z.string().optional().describe("bank deposits"),
  tokenAddress: z.string().optional().describe("on-chain deposits"),
  transactionHash: z.string().optional().describe("on-chain deposits"),
  chainId: z.int().optional().describe("on-chain deposits"),
  livemode: doc.livemode,
}));

export const depositRoutes = [
  route({
    method: "GET",
    path: "/v1/transactions/deposits/:userId",
    operation: graphql(`query ListDeposits($id: ID!, $page: Int, $limit: Int) { user(id: $id) { depositsPage(page: $page, limit: $limit) { ...DepositFields } } }`, [DepositFields]),
    variables: ({ params, query }) => ({ id: params.userId, page: integer(query.page), limit: integer(query.limit) }),
    result: (data) => found(data.user).depositsPage.map(depositBody),
    docs: {
      summary: "The user's deposit records, newest first",
      params: doc.userParam,
      query: doc.pageQuery,
      response: z.array(Deposit),
      errors: ["NOT_FOUND"],
      example: { response: [examples.deposit] },
    },
  }),
];
