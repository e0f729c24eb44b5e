import { graphql, type ResultOf } from "../graphql/typed.js";
import { withNumbers } from "../representation.js";

export const CardTransactionFields = graphql(`
  fragment CardTransactionFields on CardTransaction { id amount balance createdAt description status type livemode }
`);

/** A card transaction as the contract lists it: `createdAt` as `created_ts`, money as JSON numbers (also the `data.object` of card transaction events, with the userId). */
export const asContractTransaction = (t: ResultOf<typeof CardTransactionFields>) =>
  withNumbers(
    { id: t.id, amount: t.amount, balance: t.balance, created_ts: t.createdAt, description: t.description, status: t.status, type: t.type, livemode: t.livemode },
    ["amount", "balance"],
  );
