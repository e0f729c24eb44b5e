import { graphql, type ResultOf } from "../graphql/typed.js";
import { asGraphQLValues, pickKeys, withNumbers } from "../representation.js";
import type { Deposit } from "../generated/prisma/client.js";

const REQUIRED = ["id", "userId", "eventId", "amount", "status", "currency", "createdAt", "updatedAt", "livemode"] as const satisfies readonly (keyof ResultOf<typeof DepositFields>)[];
/** Present only on the deposits they describe: NGN bank deposits, on-chain deposits. */
const OPTIONAL = ["paymentReference", "tokenAddress", "transactionHash", "chainId"] as const satisfies readonly (keyof ResultOf<typeof DepositFields>)[];

export const DepositFields = graphql(`
  fragment DepositFields on Deposit { id userId eventId amount status currency createdAt updatedAt paymentReference tokenAddress transactionHash chainId livemode }
`);

/** The contract's deposit record: its fields in order, the optional ones only when set, the amount a JSON number. */
export function depositBody(deposit: Record<string, unknown>) {
  const keys = [...REQUIRED, ...OPTIONAL.filter((key) => deposit[key] !== null && deposit[key] !== undefined)];
  return withNumbers(pickKeys(deposit, keys), ["amount"]);
}

/** A deposit as REST shows it: the `data.object` of its events. */
export const depositObject = (deposit: Deposit) => depositBody(asGraphQLValues(deposit));
