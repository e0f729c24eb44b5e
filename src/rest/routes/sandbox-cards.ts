import { CardSpend } from "../../cards/spending.js";
import { withAmount } from "../docs.js";
import type { Route } from "../route.js";
import { CardTransaction, asContractTransaction } from "./cards.js";

export const sandboxCardRoutes: Route[] = [
  {
    method: "POST",
    path: "/v1/sandbox/card-transactions",
    operation: `mutation ($input: SimulateCardTransactionInput!) {
      simulateCardTransaction(input: $input) { id amount balance createdAt description status type }
    }`,
    variables: ({ body }) => ({ input: { userId: body.userId, amount: body.amount, description: body.description } }),
    result: (data) => asContractTransaction(data.simulateCardTransaction),
    docs: {
      summary: "Sandbox: a card payment, debited from the user's USD balance",
      body: withAmount(CardSpend),
      response: CardTransaction,
      errors: ["NOT_FOUND", "INSUFFICIENT_FUNDS"],
    },
  },
];
