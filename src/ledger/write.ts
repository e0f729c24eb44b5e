import type { Sql } from "../db/sql.js";
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

const WRITE_JOURNALS = `
  WITH "journals" AS (
    INSERT INTO "ledger_journals" ("id", "clientId", "type", "referenceId", "createdAt")
    SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::timestamptz[])
  ), "entries" AS (
    INSERT INTO "ledger_entries" ("id", "journalId", "accountId", "clientId", "userId", "sequence", "type", "currency",
                                  "amount", "balanceBefore", "balanceAfter", "referenceId", "prevHash", "hash", "createdAt")
    SELECT * FROM unnest($6::uuid[], $7::uuid[], $8::uuid[], $9::uuid[], $10::uuid[], $11::int[], $12::text[], $13::text[],
                         $14::numeric[], $15::numeric[], $16::numeric[], $17::text[], $18::text[], $19::text[], $20::timestamptz[])
  )
  UPDATE "ledger_accounts" AS a SET "balance" = u."balance", "held" = u."held", "entryCount" = u."entryCount", "lastEntryHash" = u."lastEntryHash"
  FROM unnest($21::uuid[], $22::numeric[], $23::numeric[], $24::int[], $25::text[]) AS u("id", "balance", "held", "entryCount", "lastEntryHash")
  WHERE a."id" = u."id"`;

/** The journals, all their entries and their accounts' new balances, holds and chain ends, in one statement. */
export function writeJournals(tx: Sql, journals: JournalRow[], entries: EntryRow[], accounts: LockedAccount[]) {
  const journal = columnOf(journals);
  const entry = columnOf(entries);
  const account = columnOf(accounts);
  return tx.query("ledger_write_journals", WRITE_JOURNALS, [
    ...[journal("id"), journal("clientId"), journal("type"), journal("referenceId"), journal("createdAt")],
    ...[entry("id"), entry("journalId"), entry("accountId"), entry("clientId"), entry("userId"), entry("sequence"), entry("type"), entry("currency")],
    ...[entry("amount"), entry("balanceBefore"), entry("balanceAfter"), entry("referenceId"), entry("prevHash"), entry("hash"), entry("createdAt")],
    ...[account("id"), account("balance"), account("held"), account("entryCount"), account("lastEntryHash")],
  ]);
}
