import type { Route } from "../route.js";

const WALLET = "id userId clientId walletId addressId address blockchain createdAt updatedAt";

export const walletRoutes: Route[] = [
  {
    method: "POST",
    path: "/v1/wallet",
    operation: `mutation ($userId: ID!) { createWallet(userId: $userId) { ${WALLET} } }`,
    variables: ({ body }) => ({ userId: body.userId }),
    result: (data) => data.createWallet,
  },
  {
    method: "GET",
    path: "/v1/wallet/:userId",
    operation: `query ($userId: ID!) { wallet(userId: $userId) { ${WALLET} } }`,
    variables: ({ params }) => ({ userId: params.userId }),
    result: (data) => data.wallet,
  },
];
