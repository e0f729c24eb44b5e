import type { Withdrawal } from "../generated/prisma/client.js";
import { graphql, type ResultOf } from "../graphql/typed.js";
import { maskedPixKey, type PixKey } from "../providers/brazil.js";
import { asGraphQLValues, ExactNumber, pickKeys, withNumbers } from "../representation.js";

const RECORD = ["reference", "userId", "type", "currency", "amount", "fee", "status", "destination", "failureReason", "returnReason", "createdAt", "updatedAt", "metadata", "livemode"] as const satisfies readonly (keyof ResultOf<typeof WithdrawalFields>)[];
export const WithdrawalFields = graphql(`
  fragment WithdrawalFields on Withdrawal { reference userId type currency amount fee developerFee networkFee status destination failureReason returnReason transactionHash createdAt updatedAt metadata livemode }
`);

/**
 * The withdrawal record of §6, money as JSON numbers. `developerFee` and `networkFee` (the parts of
 * `fee`) appear only on the withdrawals that carry them, so clients that never meet one see the record
 * they always saw; so does `transactionHash`, on withdrawals sent on a live network.
 */
export function withdrawalBody(withdrawal: Record<string, unknown>) {
  const keys = withdrawal.transactionHash ? [...RECORD, "transactionHash" as const] : RECORD;
  const body: Record<string, unknown> = withNumbers(pickKeys(withdrawal, keys), ["amount", "fee"]);
  for (const part of ["developerFee", "networkFee"] as const) {
    const fee = new ExactNumber(String(withdrawal[part] ?? 0));
    if (Number(fee.value) !== 0) body[part] = fee;
  }
  return body;
}

/** What the API shows of a destination: the last 4 of an account, the ends of an address, a masked Pix key. */
export function maskedDestination(withdrawal: Pick<Withdrawal, "destination">): string {
  const destination = JSON.parse(withdrawal.destination) as { account?: string; address?: string; pix?: PixKey };
  if (destination.address) return `${destination.address.slice(0, 6)}…${destination.address.slice(-4)}`;
  if (destination.pix) return `Pix ${destination.pix.keyType} ${maskedPixKey(destination.pix)}`;
  return `****${(destination.account ?? "").replace(/[^0-9A-Za-z]/g, "").slice(-4)}`;
}

/** A withdrawal as REST shows it: the `data.object` of its events. */
export const withdrawalObject = (withdrawal: Withdrawal) => withdrawalBody({ ...asGraphQLValues(withdrawal), destination: maskedDestination(withdrawal) });
