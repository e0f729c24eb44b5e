import { z } from "zod";
import { doc } from "../docs.js";
import type { Route } from "../route.js";

const WALLET = "id userId clientId walletId addressId address blockchain createdAt updatedAt";
const Wallet = z.object({
  id: doc.id,
  userId: doc.id,
  clientId: doc.id,
  walletId: z.string().describe("identifier at the custodian"),
  addressId: z.string().describe("identifier of the address at the custodian"),
  address: z.string().describe("0x EVM address"),
  blockchain: z.string(),
  createdAt: doc.timestamp,
  updatedAt: doc.timestamp,
});

export const walletRoutes: Route[] = [
  {
    method: "POST",
    path: "/v1/wallet",
    operation: `mutation ($userId: ID!) { createWallet(userId: $userId) { ${WALLET} } }`,
    variables: ({ body }) => ({ userId: body.userId }),
    result: (data) => data.createWallet,
    docs: {
      summary: "Create the user's custodial wallet (or return the existing one)",
      body: z.object({ userId: doc.id }),
      response: Wallet,
      errors: ["NOT_FOUND", "PROVIDER_ERROR"],
    },
  },
  {
    method: "GET",
    path: "/v1/wallet/:userId",
    operation: `query ($userId: ID!) { wallet(userId: $userId) { ${WALLET} } }`,
    variables: ({ params }) => ({ userId: params.userId }),
    result: (data) => data.wallet,
    docs: { summary: "Get the user's wallet", params: doc.userParam, response: Wallet, errors: ["NOT_FOUND"] },
  },
];
