import { graphql } from "../../graphql/typed.js";
import { asContractTransaction, CardTransactionFields } from "../../cards/representation.js";
import { CardSpend } from "../../cards/spending.js";
import { named, withAmount } from "../docs.js";
import { examples } from "../examples.js";
import { route } from "../route.js";
import { CardTransaction } from "./cards.js";

export const sandboxCardRoutes = [
  route({
    method: "POST",
    path: "/v1/sandbox/card-transactions",
    operation: graphql(`mutation ($input: SimulateCardTransactionInput!) {
      simulateCardTransaction(input: $input) { ...CardTransactionFields }
    }`, [CardTransactionFields]),
    variables: ({ body }) => ({ input: { userId: body.userId, amount: body.amount, description: body.description } }),
    result: (data) => asContractTransaction(data.simulateCardTransaction),
    docs: {
      summary: "Sandbox: a card payment, debited from the user's USD balance",
      body: named("CardSpendRequest", withAmount(CardSpend)),
      response: CardTransaction,
      example: { body: { userId: examples.userId, amount: 3.5, description: "Coffee" }, response: examples.cardTransaction },
      errors: ["NOT_FOUND", "INSUFFICIENT_FUNDS"],
    },
  }),
];
