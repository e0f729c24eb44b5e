import { pickKeys } from "../pick-keys.js";
import type { Route } from "../route.js";

const COMMON = ["id", "userId", "currency", "createdAt", "destinationAsset", "destinationNetwork", "destinationAddress"] as const;
const NGN_SHAPE = [...COMMON, "accountName", "accountNumber", "bankName", "bankCode"] as const;
const FIAT_SHAPE = [...COMMON, "bankName", "accountNumber", "routingNumber", "accountHolderName", "accountHolderType", "bankAddress"] as const;

/** Every field of both shapes; the body keeps those of the account's currency. */
export const VIRTUAL_ACCOUNT_FIELDS = [...new Set([...NGN_SHAPE, ...FIAT_SHAPE])].join(" ");

/** The contract's virtual account: the NGN shape for NGN, the bank shape otherwise. */
export function virtualAccountBody(account: Record<string, unknown>) {
  return pickKeys(account, account.currency === "NGN" ? NGN_SHAPE : FIAT_SHAPE);
}

export const virtualAccountRoutes: Route[] = [
  {
    method: "POST",
    path: "/v1/virtual-account/:currency",
    operation: `mutation ($input: CreateVirtualAccountInput!) { createVirtualAccount(input: $input) { ${VIRTUAL_ACCOUNT_FIELDS} } }`,
    variables: ({ params, body }) => ({
      input: {
        currency: params.currency,
        userId: body.userId,
        destinationAsset: body.destinationAsset,
        destinationNetwork: body.destinationNetwork,
        address: body.address,
      },
    }),
    result: (data) => virtualAccountBody(data.createVirtualAccount),
  },
];
