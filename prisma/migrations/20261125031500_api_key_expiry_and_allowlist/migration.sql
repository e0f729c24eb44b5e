-- API keys that end by themselves (rolled, or created to expire) and keys limited to some addresses (SPEC §13).
-- AlterTable
ALTER TABLE "api_keys" ADD COLUMN     "allowedIps" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN     "expiresAt" TIMESTAMPTZ(3);
