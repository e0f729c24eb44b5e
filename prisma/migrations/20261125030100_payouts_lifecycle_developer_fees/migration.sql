-- Payout lifecycle and developer fees (docs/payouts-and-fees.md). Written by hand: the columns are
-- what `prisma migrate diff` gives for the schema change; the CHECK constraints are by hand.

-- AlterTable
ALTER TABLE "virtual_accounts" ADD COLUMN     "developerFeePercent" DECIMAL(4,2) NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "withdrawals" ADD COLUMN     "developerFee" DECIMAL(38,18) NOT NULL DEFAULT 0,
ADD COLUMN     "returnReason" TEXT;

-- By hand: the ranges the API enforces, held by the database too.
ALTER TABLE "virtual_accounts" ADD CONSTRAINT "developer_fee_percent_range" CHECK ("developerFeePercent" >= 0 AND "developerFeePercent" <= 10);
ALTER TABLE "withdrawals" ADD CONSTRAINT "withdrawal_fees_cover_developer_fee" CHECK ("developerFee" >= 0 AND "fee" >= "developerFee");
