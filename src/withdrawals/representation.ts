import type { Withdrawal } from "../generated/prisma/client.js";
import { graphql, type ResultOf } from "../graphql/typed.js";
import { pickKeys, withNumbers } from "../representation.js";

const RECORD = ["reference", "userId", "type", "currency", "amount", "fee", "status", "destination", "failureReason", "createdAt", "updatedAt"] as const satisfies readonly (keyof ResultOf<typeof WithdrawalFields>)[];
export const WithdrawalFields = graphql(`
  fragment WithdrawalFields on Withdrawal { reference userId type currency amount fee status destination failureReason createdAt updatedAt }
`);

/** The withdrawal record of §6, money as JSON numbers. */
export const withdrawalBody = (withdrawal: Record<string, unknown>) => withNumbers(pickKeys(withdrawal, RECORD), ["amount", "fee"]);

/** What the API shows of a destination: the last 4 of an account, the ends of an address. */
export function maskedDestination(withdrawal: Pick<Withdrawal, "destination">): string {
  const destination = JSON.parse(withdrawal.destination) as { account?: string; address?: string };
  if (destination.address) return `${destination.address.slice(0, 6)}…${destination.address.slice(-4)}`;
  return `****${(destination.account ?? "").replace(/[^0-9A-Za-z]/g, "").slice(-4)}`;
}
