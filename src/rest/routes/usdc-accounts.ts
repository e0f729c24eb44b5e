import { z } from "zod";
import { graphql, type ResultOf } from "../../graphql/typed.js";
import { NETWORK_NAMES } from "../../providers/chains.js";
import { withNumbers } from "../../representation.js";
import { doc, named } from "../docs.js";
import { examples } from "../examples.js";
import { code, found, route } from "../route.js";

const UsdcAccountFields = graphql(`fragment UsdcAccountFields on UsdcAccount { id userId chain chainId address tokenAddress balance createdAt livemode }`);

const UsdcAccount = named("UsdcAccount", z.object({
  id: doc.id,
  userId: doc.id,
  chain: z.enum(NETWORK_NAMES),
  chainId: z.int(),
  address: z.string().describe("0x deposit address"),
  tokenAddress: z.string().describe("the USDC contract on that chain"),
  balance: doc.money,
  createdAt: doc.timestamp,
  livemode: doc.livemode,
}));
const network = doc.oneOf(NETWORK_NAMES, "the chain");

const asContractAccount = (account: ResultOf<typeof UsdcAccountFields>) => withNumbers(account, ["balance"]);

export const usdcAccountRoutes = [
  route({
    method: "GET",
    path: "/v1/accounts/usdc/:userId",
    operation: graphql(`query ListUsdcAccounts($userId: ID!) { usdcAccounts(userId: $userId) { ...UsdcAccountFields } }`, [UsdcAccountFields]),
    variables: ({ params }) => ({ userId: params.userId }),
    result: (data) => data.usdcAccounts.map(asContractAccount),
    docs: {
      summary: "The user's USDC accounts, one per chain",
      params: doc.userParam,
      response: z.array(UsdcAccount),
      errors: ["NOT_FOUND"],
      example: { response: [examples.usdcAccount] },
    },
  }),
  route({
    method: "GET",
    path: "/v1/accounts/usdc/:userId/:chain",
    operation: graphql(`query GetUsdcAccount($userId: ID!, $chain: Network!) { usdcAccount(userId: $userId, chain: $chain) { ...UsdcAccountFields } }`, [UsdcAccountFields]),
    variables: ({ params }) => ({ userId: params.userId, chain: code(params.chain) }),
    result: (data) => asContractAccount(found(data.usdcAccount)),
    docs: {
      summary: "The user's USDC account on one chain",
      params: { ...doc.userParam, chain: network },
      response: UsdcAccount,
      errors: ["NOT_FOUND"],
      example: { response: examples.usdcAccount },
    },
  }),
  route({
    method: "POST",
    path: "/v1/accounts/usdc/:userId",
    operation: graphql(`mutation CreateUsdcAccount($userId: ID!, $chainType: Network!) {
      createUsdcAccount(userId: $userId, chainType: $chainType) { ...UsdcAccountFields }
    }`, [UsdcAccountFields]),
    variables: ({ params, body }) => ({ userId: params.userId, chainType: code(body.chainType) }),
    result: (data) => asContractAccount(data.createUsdcAccount),
    docs: {
      summary: "Open a USDC account for the user on a chain (or return the existing one)",
      params: doc.userParam,
      body: z.object({ chainType: network }),
      response: UsdcAccount,
      errors: ["NOT_FOUND"],
      example: { body: { chainType: "BASE" }, response: examples.usdcAccount },
    },
  }),
];
