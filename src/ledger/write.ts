import type { Tx } from "../db/transaction.js";
import type { LockedAccount } from "./lock.js";

export type JournalRow = { id: string; clientId: string; type: string; referenceId: string | null; createdAt: Date };
export type EntryRow = {
  id: string;
  journalId: string;
  accountId: string;
  clientId: string;
  userId: string | null;
  sequence: number;
  type: string;
  currency: string;
  amount: string;
  balanceBefore: string;
  balanceAfter: string;
  referenceId: string | null;
  prevHash: string | null;
  hash: string;
  createdAt: Date;
};

const columnOf = <T>(rows: T[]) => <K extends keyof T>(key: K) => rows.map((row) => row[key]);

/** The journals, all their entries and their accounts' new balances and chain ends, in one statement. */
export function writeJournals(tx: Tx, journals: JournalRow[], entries: EntryRow[], accounts: LockedAccount[]) {
  const journal = columnOf(journals);
  const entry = columnOf(entries);
  const account = columnOf(accounts);
  return tx.$executeRaw`
    WITH "journals" AS (
      INSERT INTO "ledger_journals" ("id", "clientId", "type", "referenceId", "createdAt")
      SELECT * FROM unnest(${journal("id")}::uuid[], ${journal("clientId")}::uuid[], ${journal("type")}::text[], ${journal("referenceId")}::text[],
                           ${journal("createdAt")}::timestamptz[])
    ), "entries" AS (
      INSERT INTO "ledger_entries" ("id", "journalId", "accountId", "clientId", "userId", "sequence", "type", "currency",
                                    "amount", "balanceBefore", "balanceAfter", "referenceId", "prevHash", "hash", "createdAt")
      SELECT * FROM unnest(${entry("id")}::uuid[], ${entry("journalId")}::uuid[], ${entry("accountId")}::uuid[], ${entry("clientId")}::uuid[],
                           ${entry("userId")}::uuid[], ${entry("sequence")}::int[], ${entry("type")}::text[], ${entry("currency")}::text[],
                           ${entry("amount")}::numeric[], ${entry("balanceBefore")}::numeric[], ${entry("balanceAfter")}::numeric[],
                           ${entry("referenceId")}::text[], ${entry("prevHash")}::text[], ${entry("hash")}::text[], ${entry("createdAt")}::timestamptz[])
    )
    UPDATE "ledger_accounts" AS a SET "balance" = u."balance", "entryCount" = u."entryCount", "lastEntryHash" = u."lastEntryHash"
    FROM unnest(${account("id")}::uuid[], ${account("balance")}::numeric[], ${account("entryCount")}::int[], ${account("lastEntryHash")}::text[])
      AS u("id", "balance", "entryCount", "lastEntryHash")
    WHERE a."id" = u."id"`;
}
