import { graphql, type ResultOf } from "../graphql/typed.js";
import { withNumbers } from "../representation.js";

export const CardTransactionFields = graphql(`
  fragment CardTransactionFields on CardTransaction { id amount balance createdAt description status type }
`);

export const asContractTransaction = (t: ResultOf<typeof CardTransactionFields>) =>
  withNumbers(
    { id: t.id, amount: t.amount, balance: t.balance, created_ts: t.createdAt, description: t.description, status: t.status, type: t.type },
    ["amount", "balance"],
  );
