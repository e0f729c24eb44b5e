-- Written with `prisma migrate diff` from the previous schema, then completed by hand (marked below).
-- Card authorizations hold part of a user's balance: `held` sits beside `balance` on the account row and
-- is changed only under that row's lock (src/ledger/post.ts); available = balance - held.
-- AlterTable
ALTER TABLE "ledger_accounts" ADD COLUMN     "held" DECIMAL(38,18) NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "card_authorizations" (
    "id" UUID NOT NULL,
    "clientId" UUID NOT NULL,
    "userId" UUID NOT NULL,
    "cardId" UUID,
    "amount" DECIMAL(38,18) NOT NULL,
    "currency" TEXT NOT NULL,
    "merchant" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "declineReason" TEXT,
    "capturedAmount" DECIMAL(38,18),
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "card_authorizations_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "card_authorizations_userId_createdAt_idx" ON "card_authorizations"("userId", "createdAt");

-- CreateIndex
CREATE INDEX "card_authorizations_status_expiresAt_idx" ON "card_authorizations"("status", "expiresAt");

-- AddForeignKey
ALTER TABLE "card_authorizations" ADD CONSTRAINT "card_authorizations_userId_fkey" FOREIGN KEY ("userId") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "card_authorizations" ADD CONSTRAINT "card_authorizations_cardId_fkey" FOREIGN KEY ("cardId") REFERENCES "cards"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- By hand: what the ledger checks under the row lock, kept by the database too. Only user accounts
-- hold, never more than their balance (available >= 0), and never a negative amount.
ALTER TABLE "ledger_accounts" ADD CONSTRAINT "user_available_never_negative"
  CHECK ("held" >= 0 AND CASE WHEN "code" = 'USER' THEN "balance" >= "held" ELSE "held" = 0 END);
