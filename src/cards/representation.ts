import { graphql, type ResultOf } from "../graphql/typed.js";
import { asGraphQLValues, withNumbers } from "../representation.js";
import type { CardTransaction } from "../generated/prisma/client.js";

export const CardTransactionFields = graphql(`
  fragment CardTransactionFields on CardTransaction { id amount balance createdAt description status type livemode }
`);

/** A card transaction as the contract lists it: `createdAt` as `created_ts`, money as JSON numbers (also the `data.object` of card transaction events, with the userId). */
export const asContractTransaction = (t: ResultOf<typeof CardTransactionFields>) =>
  withNumbers(
    { id: t.id, amount: t.amount, balance: t.balance, created_ts: t.createdAt, description: t.description, status: t.status, type: t.type, livemode: t.livemode },
    ["amount", "balance"],
  );

/** A card transaction (with the userId the contract's transaction list leaves implicit) as REST shows it: the `data.object` of its events. */
export const cardTransactionObject = (transaction: CardTransaction) => ({
  userId: transaction.userId,
  ...asContractTransaction(asGraphQLValues(transaction) as Parameters<typeof asContractTransaction>[0]),
});
