import { z } from "zod";
import { graphql, type ResultOf } from "../../graphql/typed.js";
import { doc, named } from "../docs.js";
import { examples } from "../examples.js";
import { pickKeys } from "../pick-keys.js";
import { found, integer, withNumbers, route } from "../route.js";

const REQUIRED = ["id", "userId", "eventId", "amount", "status", "currency", "createdAt", "updatedAt"] as const satisfies readonly (keyof ResultOf<typeof DepositFields>)[];
/** Present only on the deposits they describe: NGN bank deposits, on-chain deposits. */
const OPTIONAL = ["paymentReference", "tokenAddress", "transactionHash", "chainId"] as const satisfies readonly (keyof ResultOf<typeof DepositFields>)[];

export const DepositFields = graphql(`
  fragment DepositFields on Deposit { id userId eventId amount status currency createdAt updatedAt paymentReference tokenAddress transactionHash chainId }
`);

export const Deposit = named("Deposit", z.object({
  id: doc.id,
  userId: doc.id,
  eventId: z.string().describe("the provider's event reference"),
  amount: doc.money,
  status: z.string().describe("PENDING, COMPLETED or FAILED"),
  currency: z.string().describe("fiat code (NGN, …) or token (USDC, …)"),
  createdAt: doc.timestamp,
  updatedAt: doc.timestamp,
  paymentReference: z.string().optional().describe("bank deposits"),
  tokenAddress: z.string().optional().describe("on-chain deposits"),
  transactionHash: z.string().optional().describe("on-chain deposits"),
  chainId: z.int().optional().describe("on-chain deposits"),
}));

/** The contract's deposit record: its fields in order, the optional ones only when set, the amount a JSON number. */
export function depositBody(deposit: Record<string, unknown>) {
  const keys = [...REQUIRED, ...OPTIONAL.filter((key) => deposit[key] !== null && deposit[key] !== undefined)];
  return withNumbers(pickKeys(deposit, keys), ["amount"]);
}

export const depositRoutes = [
  route({
    method: "GET",
    path: "/v1/transactions/deposits/:userId",
    operation: graphql(`query ($id: ID!, $page: Int, $limit: Int) { user(id: $id) { depositsPage(page: $page, limit: $limit) { ...DepositFields } } }`, [DepositFields]),
    variables: ({ params, query }) => ({ id: params.userId, page: integer(query.page), limit: integer(query.limit) }),
    result: (data) => found(data.user).depositsPage.map(depositBody),
    docs: {
      summary: "The user's deposit records, newest first",
      params: doc.userParam,
      query: doc.pageQuery,
      response: z.array(Deposit),
      errors: ["NOT_FOUND"],
      example: { response: [examples.deposit] },
    },
  }),
];
