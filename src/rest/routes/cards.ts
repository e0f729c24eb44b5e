import { integer, withNumbers, type Route } from "../route.js";

const CARD = "id userId providerId cardNumber cardCVV cardExpiry createdAt updatedAt";
const CREATE_CARD = `mutation ($userId: ID!) { createVirtualCard(userId: $userId) { ${CARD} } }`;

type CardTransaction = { id: string; amount: string; balance: string; createdAt: string; description: string; status: string; type: string };

export const asContractTransaction = (t: CardTransaction) =>
  withNumbers(
    { id: t.id, amount: t.amount, balance: t.balance, created_ts: t.createdAt, description: t.description, status: t.status, type: t.type },
    ["amount", "balance"],
  );

export const cardRoutes: Route[] = [
  {
    method: "GET",
    path: "/v1/virtual-cards/transactions/:userId/:page",
    operation: `query ($userId: ID!, $page: Int!) {
      cardTransactions(userId: $userId, page: $page) {
        page pages total transactions { id amount balance createdAt description status type }
      }
    }`,
    variables: ({ params }) => ({ userId: params.userId, page: integer(params.page) }),
    result: ({ cardTransactions: page }) => ({ ...page, transactions: page.transactions.map(asContractTransaction) }),
  },
  {
    // A write on a GET: the contract's GET creates the card when absent.
    method: "GET",
    path: "/v1/virtual-cards/:userId",
    operation: CREATE_CARD,
    variables: ({ params }) => ({ userId: params.userId }),
    result: (data) => data.createVirtualCard,
  },
  {
    method: "POST",
    path: "/v1/virtual-cards",
    operation: CREATE_CARD,
    variables: ({ body }) => ({ userId: body.userId }),
    result: (data) => data.createVirtualCard,
  },
];
