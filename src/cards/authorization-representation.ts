import { graphql, type ResultOf } from "../graphql/typed.js";
import { asGraphQLValues, pickKeys, withNumbers } from "../representation.js";
import type { CardAuthorization } from "../generated/prisma/client.js";

export const CardAuthorizationFields = graphql(`
  fragment CardAuthorizationFields on CardAuthorization {
    id userId cardId amount currency merchant status declineReason capturedAmount expiresAt createdAt updatedAt livemode
  }
`);

const RECORD = [
  "id",
  "userId",
  "cardId",
  "amount",
  "currency",
  "merchant",
  "status",
  "declineReason",
  "capturedAmount",
  "expiresAt",
  "createdAt",
  "updatedAt",
  "livemode",
] as const satisfies readonly (keyof ResultOf<typeof CardAuthorizationFields>)[];

/**
 * A card authorization as REST shows it (also the `data.object` of its events): money as JSON
 * numbers, the decline reason in the issuers' lower case (`insufficient_funds`, `no_card`).
 */
export function cardAuthorizationBody(authorization: Record<string, unknown>) {
  const body = withNumbers(pickKeys(authorization, RECORD), ["amount", "capturedAmount"]);
  return { ...body, declineReason: typeof body.declineReason === "string" ? body.declineReason.toLowerCase() : null };
}

/** A card authorization as REST shows it: the `data.object` of its events. */
export const cardAuthorizationObject = (authorization: CardAuthorization) => cardAuthorizationBody(asGraphQLValues(authorization));
