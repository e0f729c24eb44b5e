-- Metadata (the client's key-value pairs) on users, virtual accounts, withdrawals and webhook endpoints;
-- users' externalId, unique per client; the GIN index serves the list filter metadata[key]=value (metadata @> {...}).
-- AlterTable
ALTER TABLE "users" ADD COLUMN     "externalId" TEXT,
ADD COLUMN     "metadata" JSONB NOT NULL DEFAULT '{}';

-- AlterTable
ALTER TABLE "virtual_accounts" ADD COLUMN     "metadata" JSONB NOT NULL DEFAULT '{}';

-- AlterTable
ALTER TABLE "withdrawals" ADD COLUMN     "metadata" JSONB NOT NULL DEFAULT '{}';

-- AlterTable
ALTER TABLE "webhook_endpoints" ADD COLUMN     "metadata" JSONB NOT NULL DEFAULT '{}';

-- CreateIndex
CREATE INDEX "users_metadata_idx" ON "users" USING GIN ("metadata" jsonb_path_ops);

-- CreateIndex
CREATE UNIQUE INDEX "users_clientId_externalId_key" ON "users"("clientId", "externalId");

