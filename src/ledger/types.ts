import type { Decimal } from "decimal.js";

export const ENTRY_TYPES = [
  "DEPOSIT",
  "CONVERSION_OUT",
  "CONVERSION_IN",
  "TRANSFER_OUT",
  "TRANSFER_OUT_REVERSAL",
  "WITHDRAWAL",
  "WITHDRAWAL_REVERSAL",
  "CARD_DEBIT",
  "FEE",
] as const;
export type EntryType = (typeof ENTRY_TYPES)[number];

/**
 * System accounts: the other side of every user movement, one per (client, code, currency).
 * CLIENT_REVENUE holds the developer fees the client charged its own users; FEES holds ours.
 */
export const SYSTEM_ACCOUNTS = ["PROVIDER_SETTLEMENT", "FX", "FEES", "CARD_SETTLEMENT", "PAYOUTS", "ONCHAIN_SETTLEMENT", "CLIENT_REVENUE"] as const;
export type SystemAccount = (typeof SYSTEM_ACCOUNTS)[number];

export type AccountRef = { userId: string; currency: string } | { system: SystemAccount; currency: string };

/** One side of a journal. `amount` is signed: positive credits the account, negative debits it. */
export type Posting = { account: AccountRef; amount: Decimal; type: EntryType };

/** A fee's FEE pair: the user's balance against the system account it goes to (none when it is zero). */
export function feePostings(userId: string, currency: string, fee: Decimal, to: SystemAccount): Posting[] {
  if (fee.isZero()) return [];
  return [
    { account: { userId, currency }, amount: fee.negated(), type: "FEE" },
    { account: { system: to, currency }, amount: fee, type: "FEE" },
  ];
}

export type JournalInput = {
  clientId: string;
  /** What caused it: a deposit, conversion, withdrawal or card transaction id. */
  referenceId?: string;
  /** The journal's kind, for reading; each posting carries its own entry type. */
  type: EntryType;
  postings: Posting[];
};

/**
 * A change of what a user's balance holds for card authorizations: positive places a hold, negative
 * releases one. Holds are not ledger entries; they reduce what the user may spend (available).
 */
export type HoldChange = { userId: string; currency: string; amount: Decimal };
