-- Written with `prisma migrate diff` from the previous schema, then completed by hand (marked below).
-- Every existing account becomes shard 0: a client's single system account keeps its chain and
-- balance as the first shard of its house account, and user accounts are always shard 0.

-- DropIndex
DROP INDEX "ledger_accounts_clientId_userId_code_currency_key";

-- AlterTable
ALTER TABLE "ledger_accounts" ADD COLUMN     "shard" INTEGER NOT NULL DEFAULT 0;

-- CreateIndex (by hand: NULLS NOT DISTINCT, as before, so that system accounts, whose userId is NULL, stay unique)
CREATE UNIQUE INDEX "ledger_accounts_clientId_userId_code_currency_shard_key" ON "ledger_accounts"("clientId", "userId", "code", "currency", "shard") NULLS NOT DISTINCT;

-- By hand: only system accounts are sharded.
ALTER TABLE "ledger_accounts" ADD CONSTRAINT "only_system_accounts_are_sharded" CHECK ("shard" >= 0 AND ("code" <> 'USER' OR "shard" = 0));
