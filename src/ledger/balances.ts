import type { Decimal } from "decimal.js";
import { Exact } from "../money/amount.js";

type DecimalLike = Decimal.Value | { toString(): string };

/** A user's balance account as stored: its posted balance and what card authorizations hold of it. */
export type HeldAccount = { currency: string; balance: DecimalLike; held: DecimalLike };
/** A deposit still PENDING: a credit on its way, in its own currency. */
export type PendingCredit = { currency: string; amount: DecimalLike };

/**
 * The three balances of one currency, as Modern Treasury defines them for a credit-normal account:
 * `posted` is the ledger balance; `pending` adds the pending credits (deposits still PENDING, at
 * their full amount) and takes off the pending debits (holds); `available` is posted less holds,
 * what the funds rule lets the user spend.
 */
export type ThreeBalances = { currency: string; posted: string; pending: string; available: string };

/** What each balance means, for the schema and the REST documentation. */
export const BALANCE_MEANINGS = {
  balance: "the posted balance (the same as posted)",
  posted: "the ledger balance: the sum of every posted entry",
  pending: "posted + deposits still PENDING (their full amount, in their own currency) − holds of pending card authorizations",
  available: "posted − holds: what withdrawals, conversions and card spending may use",
} as const;

/** One row per currency with an account or a pending deposit, by currency. */
export function threeBalances(accounts: HeldAccount[], pendingCredits: PendingCredit[]): ThreeBalances[] {
  const sums = new Map<string, { posted: Decimal; held: Decimal; incoming: Decimal }>();
  const of = (currency: string) => {
    const sum = sums.get(currency) ?? { posted: new Exact(0), held: new Exact(0), incoming: new Exact(0) };
    sums.set(currency, sum);
    return sum;
  };
  for (const account of accounts) {
    const sum = of(account.currency);
    sum.posted = sum.posted.plus(account.balance.toString());
    sum.held = sum.held.plus(account.held.toString());
  }
  for (const credit of pendingCredits) {
    const sum = of(credit.currency);
    sum.incoming = sum.incoming.plus(credit.amount.toString());
  }
  return [...sums.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([currency, { posted, held, incoming }]) => ({
      currency,
      posted: posted.toFixed(),
      pending: posted.plus(incoming).minus(held).toFixed(),
      available: posted.minus(held).toFixed(),
    }));
}
