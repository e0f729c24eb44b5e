import { z } from "zod";
import { doc } from "../docs.js";
import { code, withNumbers, type Route } from "../route.js";

const USDC_ACCOUNT = "id userId chain chainId address tokenAddress balance createdAt";

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

const asContractAccount = (account: Record<string, unknown>) => withNumbers(account, ["balance"]);

export const usdcAccountRoutes: Route[] = [
  {
    method: "GET",
    path: "/v1/accounts/usdc/:userId",
    operation: `query ($userId: ID!) { usdcAccounts(userId: $userId) { ${USDC_ACCOUNT} } }`,
    variables: ({ params }) => ({ userId: params.userId }),
    result: (data) => data.usdcAccounts.map(asContractAccount),
    docs: { summary: "The user's USDC accounts, one per chain", params: doc.userParam, response: z.array(UsdcAccount), errors: ["NOT_FOUND"] },
  },
  {
    method: "GET",
    path: "/v1/accounts/usdc/:userId/:chain",
    operation: `query ($userId: ID!, $chain: Network!) { usdcAccount(userId: $userId, chain: $chain) { ${USDC_ACCOUNT} } }`,
    variables: ({ params }) => ({ userId: params.userId, chain: code(params.chain) }),
    result: (data) => asContractAccount(data.usdcAccount),
    docs: {
      summary: "The user's USDC account on one chain",
      params: { ...doc.userParam, chain: "chain type, such as ETHEREUM" },
      response: UsdcAccount,
      errors: ["NOT_FOUND"],
    },
  },
  {
    method: "POST",
    path: "/v1/accounts/usdc/:userId",
    operation: `mutation ($userId: ID!, $chainType: Network!) {
      createUsdcAccount(userId: $userId, chainType: $chainType) { ${USDC_ACCOUNT} }
    }`,
    variables: ({ params, body }) => ({ userId: params.userId, chainType: code(body.chainType) }),
    result: (data) => asContractAccount(data.createUsdcAccount),
    docs: {
      summary: "Open a USDC account for the user on a chain (or return the existing one)",
      params: doc.userParam,
      body: z.object({ chainType: z.string().describe("ETHEREUM, POLYGON, BASE, ARBITRUM or OPTIMISM") }),
      response: UsdcAccount,
      errors: ["NOT_FOUND"],
    },
  },
];
