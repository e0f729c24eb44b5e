import { z } from "zod";
import { graphql } from "../../graphql/typed.js";
import { cardAuthorizationBody, CardAuthorizationFields } from "../../cards/authorization-representation.js";
import { CardAuthorizationRequest } from "../../cards/authorizations.js";
import { asContractTransaction, CardTransactionFields } from "../../cards/representation.js";
import { CardSpend } from "../../cards/spending.js";
import { doc, named, withAmount } from "../docs.js";
import { examples } from "../examples.js";
import { route } from "../route.js";
import { CardAuthorization, CardTransaction } from "./cards.js";

const AUTHORIZATION_ID = { id: "the card authorization's id (UUID)" };

export const sandboxCardRoutes = [
  route({
    method: "POST",
    path: "/v1/sandbox/card-transactions",
    operation: graphql(`mutation SimulateCardTransaction($input: SimulateCardTransactionInput!) {
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
  route({
    method: "POST",
    path: "/v1/sandbox/card-authorizations",
    operation: graphql(`mutation SimulateCardAuthorization($input: SimulateCardAuthorizationInput!) {
      simulateCardAuthorization(input: $input) { ...CardAuthorizationFields }
    }`, [CardAuthorizationFields]),
    variables: ({ body }) => ({ input: { userId: body.userId, amount: body.amount, merchant: body.merchant } }),
    result: (data) => cardAuthorizationBody(data.simulateCardAuthorization),
    docs: {
      summary: "Sandbox: an authorization at the user's card, holding the amount on USD available",
      description:
        "PENDING: the amount is held (available falls, posted does not) until captured, reversed or expired (CARD_AUTHORIZATION_TTL). " +
        "DECLINED, recorded and holding nothing: `declineReason` is `insufficient_funds` (available below the amount) or `no_card`.",
      body: named("CardAuthorizationRequest", withAmount(CardAuthorizationRequest)),
      response: CardAuthorization,
      errors: ["NOT_FOUND"],
      example: { body: { userId: examples.userId, amount: 42, merchant: "Hotel Sandbox" }, response: examples.cardAuthorization },
    },
  }),
  route({
    method: "POST",
    path: "/v1/sandbox/card-authorizations/:id/capture",
    operation: graphql(`mutation CaptureCardAuthorization($id: ID!, $amount: Decimal) { captureCardAuthorization(id: $id, amount: $amount) { ...CardAuthorizationFields } }`, [
      CardAuthorizationFields,
    ]),
    variables: ({ params, body }) => ({ id: params.id, amount: body.amount }),
    result: (data) => cardAuthorizationBody(data.captureCardAuthorization),
    docs: {
      summary: "Sandbox: capture a PENDING authorization, in full or in part",
      description:
        "The hold is released and the captured amount posted as a CARD_DEBIT: a SETTLED card transaction with the authorization's id. " +
        "Any status but PENDING (or a PENDING one past its expiry) is a 409 that changes nothing.",
      params: AUTHORIZATION_ID,
      body: named("CardCaptureRequest", z.object({ amount: doc.money.optional().describe("at most the authorized amount; all of it when absent") })),
      response: CardAuthorization,
      errors: ["NOT_FOUND", "CONFLICT"],
      example: { body: { amount: 40 }, response: { ...examples.cardAuthorization, status: "CAPTURED", capturedAmount: 40, updatedAt: examples.later } },
    },
  }),
  route({
    method: "POST",
    path: "/v1/sandbox/card-authorizations/:id/reverse",
    operation: graphql(`mutation ReverseCardAuthorization($id: ID!) { reverseCardAuthorization(id: $id) { ...CardAuthorizationFields } }`, [CardAuthorizationFields]),
    variables: ({ params }) => ({ id: params.id }),
    result: (data) => cardAuthorizationBody(data.reverseCardAuthorization),
    docs: {
      summary: "Sandbox: reverse a PENDING authorization, releasing its hold",
      description: "Any status but PENDING (or a PENDING one past its expiry) is a 409 that changes nothing.",
      params: AUTHORIZATION_ID,
      response: CardAuthorization,
      errors: ["NOT_FOUND", "CONFLICT"],
      example: { response: { ...examples.cardAuthorization, status: "REVERSED", updatedAt: examples.later } },
    },
  }),
];
