-- Restricted API keys (name, permissions) and the audit log (SPEC §13).
-- AlterTable
ALTER TABLE "api_keys" ADD COLUMN     "name" TEXT,
ADD COLUMN     "permissions" JSONB;

-- CreateTable
CREATE TABLE "audit_log" (
    "id" UUID NOT NULL,
    "clientId" UUID NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "actorType" TEXT NOT NULL,
    "actorId" UUID NOT NULL,
    "operation" TEXT NOT NULL,
    "targetIds" TEXT[],
    "requestId" TEXT NOT NULL,
    "ip" TEXT NOT NULL,
    "outcome" TEXT NOT NULL,

    CONSTRAINT "audit_log_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "audit_log_clientId_at_id_idx" ON "audit_log"("clientId", "at", "id");

