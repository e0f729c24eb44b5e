import { createHash } from "node:crypto";
import { Decimal } from "decimal.js";

export type HashedContent = {
  accountId: string;
  journalId: string;
  sequence: number;
  type: string;
  currency: string;
  amount: Decimal.Value;
  balanceBefore: Decimal.Value;
  balanceAfter: Decimal.Value;
  referenceId: string | null;
  createdAt: Date;
};

/**
 * An entry's hash covers its content and the previous entry's hash of the same account, so changing,
 * removing or reordering any entry breaks every hash after it. Decimals are hashed in canonical form
 * (no trailing zeros), so the value read back from NUMERIC hashes the same as the value written.
 */
export function entryHash(prevHash: string | null, entry: HashedContent): string {
  const canonical = JSON.stringify([
    prevHash ?? "",
    entry.accountId,
    entry.journalId,
    entry.sequence,
    entry.type,
    entry.currency,
    new Decimal(entry.amount).toFixed(),
    new Decimal(entry.balanceBefore).toFixed(),
    new Decimal(entry.balanceAfter).toFixed(),
    entry.referenceId ?? "",
    entry.createdAt.toISOString(),
  ]);
  return createHash("sha256").update(canonical).digest("hex");
}
