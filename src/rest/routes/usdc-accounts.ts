import { withNumbers, type Route } from "../route.js";

const USDC_ACCOUNT = "id userId chain chainId address tokenAddress balance createdAt";

const asContractAccount = (account: Record<string, unknown>) => withNumbers(account, ["balance"]);

export const usdcAccountRoutes: Route[] = [
  {
    method: "GET",
    path: "/v1/accounts/usdc/:userId",
    operation: `query ($userId: ID!) { usdcAccounts(userId: $userId) { ${USDC_ACCOUNT} } }`,
    variables: ({ params }) => ({ userId: params.userId }),
    result: (data) => data.usdcAccounts.map(asContractAccount),
  },
  {
    method: "GET",
    path: "/v1/accounts/usdc/:userId/:chain",
    operation: `query ($userId: ID!, $chain: String!) { usdcAccount(userId: $userId, chain: $chain) { ${USDC_ACCOUNT} } }`,
    variables: ({ params }) => ({ userId: params.userId, chain: params.chain }),
    result: (data) => asContractAccount(data.usdcAccount),
  },
  {
    method: "POST",
    path: "/v1/accounts/usdc/:userId",
    operation: `mutation ($userId: ID!, $chainType: String!) {
      createUsdcAccount(userId: $userId, chainType: $chainType) { ${USDC_ACCOUNT} }
    }`,
    variables: ({ params, body }) => ({ userId: params.userId, chainType: body.chainType }),
    result: (data) => asContractAccount(data.createUsdcAccount),
  },
];
