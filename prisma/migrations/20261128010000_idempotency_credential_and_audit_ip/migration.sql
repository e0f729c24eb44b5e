-- A kept idempotent answer replays only to the credential that made it (records written before have none, and replay to no one).
-- AlterTable
ALTER TABLE "idempotency_records" ADD COLUMN     "credentialId" UUID;

-- The audit log keeps only a parsed address, or none.
-- AlterTable
ALTER TABLE "audit_log" ALTER COLUMN "ip" DROP NOT NULL;
