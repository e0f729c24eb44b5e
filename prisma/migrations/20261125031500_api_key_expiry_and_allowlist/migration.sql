-- API keys that end by themselves (rolled, or created to expire) and keys limited to some addresses (SPEC §13).
-- AlterTable
ALTER TABLE "api_keys" ADD COLUMN     "allowedIps" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN     "expiresAt" TIMESTAMPTZ(3);

-- The retention job deletes keys expired long ago, oldest first (src/retention/job.ts).
-- CreateIndex
CREATE INDEX "api_keys_expiresAt_idx" ON "api_keys"("expiresAt");
