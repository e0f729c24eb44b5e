import { z } from "zod";
import { graphql, type ResultOf } from "../../graphql/typed.js";
import { withNumbers } from "../../representation.js";
import { doc } from "../docs.js";
import { code, found, route } from "../route.js";

const UsdcAccountFields = graphql(`fragment UsdcAccountFields on UsdcAccount { id userId chain chainId address tokenAddress balance createdAt }`);

const UsdcAccount = z.object({
  id: doc.id,
  userId: doc.id,
  chain: z.string().describe("ETHEREUM, POLYGON, BASE, ARBITRUM or OPTIMISM"),
  chainId: z.int(),
  address: z.string().describe("0x deposit address"),
  tokenAddress: z.string().describe("the USDC contract on that chain"),
  balance: doc.money,
  createdAt: doc.timestamp,
});

const asContractAccount = (account: ResultOf<typeof UsdcAccountFields>) => withNumbers(account, ["balance"]);

export const usdcAccountRoutes = [
  route({
    method: "GET",
    path: "/v1/accounts/usdc/:userId",
    operation: graphql(`query ($userId: ID!) { usdcAccounts(userId: $userId) { ...UsdcAccountFields } }`, [UsdcAccountFields]),
    variables: ({ params }) => ({ userId: params.userId }),
    result: (data) => data.usdcAccounts.map(asContractAccount),
    docs: { summary: "The user's USDC accounts, one per chain", params: doc.userParam, response: z.array(UsdcAccount), errors: ["NOT_FOUND"] },
  }),
  route({
    method: "GET",
    path: "/v1/accounts/usdc/:userId/:chain",
    operation: graphql(`query ($userId: ID!, $chain: Network!) { usdcAccount(userId: $userId, chain: $chain) { ...UsdcAccountFields } }`, [UsdcAccountFields]),
    variables: ({ params }) => ({ userId: params.userId, chain: code(params.chain) }),
    result: (data) => asContractAccount(found(data.usdcAccount)),
    docs: {
      summary: "The user's USDC account on one chain",
      params: { ...doc.userParam, chain: "chain type, such as ETHEREUM" },
      response: UsdcAccount,
      errors: ["NOT_FOUND"],
    },
  }),
  route({
    method: "POST",
    path: "/v1/accounts/usdc/:userId",
    operation: graphql(`mutation ($userId: ID!, $chainType: Network!) {
      createUsdcAccount(userId: $userId, chainType: $chainType) { ...UsdcAccountFields }
    }`, [UsdcAccountFields]),
    variables: ({ params, body }) => ({ userId: params.userId, chainType: code(body.chainType) }),
    result: (data) => asContractAccount(data.createUsdcAccount),
    docs: {
      summary: "Open a USDC account for the user on a chain (or return the existing one)",
      params: doc.userParam,
      body: z.object({ chainType: z.string().describe("ETHEREUM, POLYGON, BASE, ARBITRUM or OPTIMISM") }),
      response: UsdcAccount,
      errors: ["NOT_FOUND"],
    },
  }),
];
