import { z } from "zod";
import { graphql } from "../../graphql/typed.js";
import { doc, named } from "../docs.js";
import { examples } from "../examples.js";
import { route } from "../route.js";

const WalletFields = graphql(`fragment WalletFields on Wallet { id userId clientId walletId addressId address blockchain createdAt updatedAt livemode }`);
const Wallet = named("Wallet", z.object({
  id: doc.id,
  userId: doc.id,
  clientId: doc.id,
  walletId: z.string().describe("identifier at the custodian"),
  addressId: z.string().describe("identifier of the address at the custodian"),
  address: z.string().describe("0x EVM address"),
  blockchain: z.string(),
  createdAt: doc.timestamp,
  updatedAt: doc.timestamp,
  livemode: doc.livemode,
}));

export const walletRoutes = [
  route({
    method: "POST",
    path: "/v1/wallet",
    operation: graphql(`mutation CreateWallet($userId: ID!) { createWallet(userId: $userId) { ...WalletFields } }`, [WalletFields]),
    variables: ({ body }) => ({ userId: body.userId }),
    result: (data) => data.createWallet,
    docs: {
      summary: "Create the user's custodial wallet (or return the existing one)",
      body: z.object({ userId: doc.id }),
      response: Wallet,
      errors: ["NOT_FOUND", "PROVIDER_ERROR"],
      example: { body: { userId: examples.userId }, response: examples.wallet },
    },
  }),
  route({
    method: "GET",
    path: "/v1/wallet/:userId",
    operation: graphql(`query GetWallet($userId: ID!) { wallet(userId: $userId) { ...WalletFields } }`, [WalletFields]),
    variables: ({ params }) => ({ userId: params.userId }),
    result: (data) => data.wallet,
    docs: { summary: "Get the user's wallet", params: doc.userParam, response: Wallet, errors: ["NOT_FOUND"], example: { response: examples.wallet } },
  }),
];
