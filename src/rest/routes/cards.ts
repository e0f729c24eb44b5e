import { z } from "zod";
import { cardAuthorizationBody, CardAuthorizationFields } from "../../cards/authorization-representation.js";
import { AUTHORIZATION_STATUSES } from "../../cards/authorizations.js";
import { asContractTransaction, CardTransactionFields } from "../../cards/representation.js";
import { idCursor } from "../../graphql/cursors.js";
import { graphql } from "../../graphql/typed.js";
import { doc, named } from "../docs.js";
import { examples } from "../examples.js";
import { code, found, integer, route } from "../route.js";

const CardFields = graphql(`fragment CardFields on VirtualCard { id userId providerId cardNumber cardCVV cardExpiry createdAt updatedAt livemode }`);
const Card = named("Card", z.object({
  id: doc.id,
  userId: doc.id,
  providerId: z.string().describe("identifier at the card issuer"),
  cardNumber: z.string().describe("groups of four digits separated by spaces"),
  cardCVV: z.string(),
  cardExpiry: z.string().describe("MM/YY"),
  createdAt: doc.timestamp,
  updatedAt: doc.timestamp,
  livemode: doc.livemode,
}));
export const CardTransaction = named("CardTransaction", z.object({
  id: doc.id,
  amount: doc.money,
  balance: doc.money.describe("balance after the transaction"),
  created_ts: doc.timestamp,
  description: z.string().describe("merchant text"),
  status: z.string().describe("SETTLED"),
  type: z.string().describe("DEBIT"),
  livemode: doc.livemode,
}));

export const CardAuthorization = named("CardAuthorization", z.object({
  id: doc.id,
  userId: doc.id,
  cardId: doc.id.nullable().describe("null when declined for want of a card"),
  amount: doc.money.describe("the amount authorized, held while PENDING"),
  currency: z.literal("USD"),
  merchant: z.string(),
  status: z.enum(AUTHORIZATION_STATUSES),
  declineReason: z.enum(["insufficient_funds", "no_card"]).nullable().describe("why it was DECLINED; null otherwise"),
  capturedAmount: doc.money.nullable().describe("what the capture took; null until CAPTURED"),
  expiresAt: doc.timestamp.describe("when a PENDING authorization expires and its hold is released"),
  createdAt: doc.timestamp,
  updatedAt: doc.timestamp,
  livemode: doc.livemode,
}));

export const cardRoutes = [
  route({
    method: "GET",
    path: "/v1/virtual-cards/authorizations/:userId",
    operation: graphql(`query ListCardAuthorizations($id: ID!, $status: CardAuthorizationStatus, $first: Int, $after: String) {
      user(id: $id) { cardAuthorizations(status: $status, first: $first, after: $after) { edges { node { ...CardAuthorizationFields } } pageInfo { hasNextPage } } }
    }`, [CardAuthorizationFields]),
    variables: ({ params, query }) => ({ id: params.userId, status: code(query.status), first: integer(query.limit), after: idCursor(query.after) }),
    result: (data) => {
      const page = found(data.user).cardAuthorizations;
      return { data: page.edges.map((edge) => cardAuthorizationBody(edge.node)), hasMore: page.pageInfo.hasNextPage };
    },
    docs: {
      summary: "The user's card authorizations, newest first",
      params: doc.userParam,
      query: z.object({
        status: doc.oneOf(AUTHORIZATION_STATUSES, "only this status").optional(),
        limit: z.int().min(1).max(100).optional().describe("1–100, default 20"),
        after: z.string().optional().describe("an authorization id: only those listed after it (older)"),
      }),
      response: z.object({ data: z.array(CardAuthorization), hasMore: z.boolean() }),
      errors: ["NOT_FOUND"],
      example: { response: { data: [examples.cardAuthorization], hasMore: false } },
    },
  }),
  route({
    method: "GET",
    path: "/v1/virtual-cards/transactions/:userId/:page",
    operation: graphql(`query ListCardTransactions($userId: ID!, $page: Int!) {
      cardTransactionsPage(userId: $userId, page: $page) {
        page pages total transactions { ...CardTransactionFields }
      }
    }`, [CardTransactionFields]),
    variables: ({ params }) => ({ userId: params.userId, page: integer(params.page) }),
    result: ({ cardTransactionsPage: page }) => ({ ...page, transactions: page.transactions.map(asContractTransaction) }),
    docs: {
      summary: "A page of the user's card transactions",
      params: { ...doc.userParam, page: z.int().min(1).describe("page number, from 1") },
      response: z.object({ page: z.int(), pages: z.int(), total: z.int(), transactions: z.array(CardTransaction) }),
      errors: ["NOT_FOUND"],
      example: { response: { page: 1, pages: 1, total: 1, transactions: [examples.cardTransaction] } },
    },
  }),
  route({
    // A write on a GET: the contract's GET creates the card when absent.
    method: "GET",
    path: "/v1/virtual-cards/:userId",
    operation: graphql(`mutation GetVirtualCard($userId: ID!) { createVirtualCard(userId: $userId) { ...CardFields } }`, [CardFields]),
    variables: ({ params }) => ({ userId: params.userId }),
    result: (data) => data.createVirtualCard,
    docs: {
      summary: "Get the user's USD virtual card, issuing it when absent",
      params: doc.userParam,
      response: Card,
      errors: ["NOT_FOUND", "PROVIDER_ERROR"],
      example: { response: examples.card },
    },
  }),
  route({
    method: "POST",
    path: "/v1/virtual-cards",
    operation: graphql(`mutation CreateVirtualCard($userId: ID!) { createVirtualCard(userId: $userId) { ...CardFields } }`, [CardFields]),
    variables: ({ body }) => ({ userId: body.userId }),
    result: (data) => data.createVirtualCard,
    docs: {
      summary: "Issue the user's USD virtual card (or return the existing one)",
      body: z.object({ userId: doc.id }),
      response: Card,
      errors: ["NOT_FOUND", "PROVIDER_ERROR"],
      example: { body: { userId: examples.userId }, response: examples.card },
    },
  }),
];
