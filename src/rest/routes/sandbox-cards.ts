import type { Route } from "../route.js";
import { asContractTransaction } from "./cards.js";

export const sandboxCardRoutes: Route[] = [
  {
    method: "POST",
    path: "/v1/sandbox/card-transactions",
    operation: `mutation ($input: SimulateCardTransactionInput!) {
      simulateCardTransaction(input: $input) { id amount balance createdAt description status type }
    }`,
    variables: ({ body }) => ({ input: { userId: body.userId, amount: body.amount, description: body.description } }),
    result: (data) => asContractTransaction(data.simulateCardTransaction),
  },
];
