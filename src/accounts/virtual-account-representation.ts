import { graphql, type ResultOf } from "../graphql/typed.js";
import { asGraphQLValues, pickKeys } from "../representation.js";
import type { VirtualAccount } from "../generated/prisma/client.js";

const COMMON = ["id", "userId", "currency", "createdAt", "destinationAsset", "destinationNetwork", "destinationAddress"] as const;
const NGN_SHAPE = [...COMMON, "accountName", "accountNumber", "bankName", "bankCode", "metadata", "livemode"] as const satisfies readonly (keyof ResultOf<typeof VirtualAccountFields>)[];
const FIAT_SHAPE = [...COMMON, "bankName", "accountNumber", "routingNumber", "accountHolderName", "accountHolderType", "bankAddress", "metadata", "livemode"] as const satisfies readonly (keyof ResultOf<typeof VirtualAccountFields>)[];

/** Every field of both shapes; the body keeps those of the account's currency. */
export const VirtualAccountFields = graphql(`
  fragment VirtualAccountFields on VirtualAccount {
    id userId currency createdAt destinationAsset destinationNetwork destinationAddress
    accountName accountNumber bankName bankCode routingNumber accountHolderName accountHolderType bankAddress developerFeePercent
    accountName accountNumber bankName bankCode routingNumber accountHolderName accountHolderType bankAddress metadata livemode
  }
`);

/**
 * The contract's virtual account: the NGN shape for NGN, the bank shape otherwise. `developerFeePercent`
 * (a JSON number) appears on the accounts that charge one, so the contract's shapes stay as they were
 * for clients that never set it.
 */
export function virtualAccountBody(account: Record<string, unknown>) {
  const body: Record<string, unknown> = pickKeys(account, account.currency === "NGN" ? NGN_SHAPE : FIAT_SHAPE);
  const developerFeePercent = Number(account.developerFeePercent ?? 0);
  return developerFeePercent === 0 ? body : { ...body, developerFeePercent };
}

/** A virtual account as REST shows it: the `data.object` of its events. */
export const virtualAccountObject = (account: VirtualAccount) => virtualAccountBody(asGraphQLValues(account));
