-- Test mode and live mode (SPEC §15). A client (the business) is two tenants: a row per mode, tied by
-- "accountId" (the id of its test row, which is the row every earlier client already has). Every
-- resource row keeps pointing at one tenant through its "clientId", so a mode is isolated exactly as a
-- tenant is. Existing clients, their keys and all their data become TEST mode: a database built before
-- modes holds play money (the sandbox was on by default), and nothing of it may ever reach a live
-- network. Their live tenants are created here, empty.
ALTER TABLE "clients" ADD COLUMN "mode" TEXT NOT NULL DEFAULT 'test';
ALTER TABLE "clients" ADD CONSTRAINT "clients_mode_check" CHECK ("mode" IN ('test', 'live'));
ALTER TABLE "clients" ADD COLUMN "accountId" UUID;
UPDATE "clients" SET "accountId" = "id";
ALTER TABLE "clients" ALTER COLUMN "accountId" SET NOT NULL;
DROP INDEX IF EXISTS "clients_email_key";
CREATE UNIQUE INDEX "clients_email_mode_key" ON "clients"("email", "mode");
CREATE UNIQUE INDEX "clients_accountId_mode_key" ON "clients"("accountId", "mode");
INSERT INTO "clients" ("id", "email", "name", "createdAt", "mode", "accountId")
  SELECT gen_random_uuid(), "email", "name", "createdAt", 'live', "id" FROM "clients" WHERE "mode" = 'test';

-- Which BIP-44 account a custodial address was derived on: 0 for live deposit addresses
-- (m/44'/60'/0'/0/i), 2 for test ones (m/44'/60'/2'/0/i). Addresses derived before modes are on 0.
ALTER TABLE "sandbox_custodian_addresses" ADD COLUMN "account" INTEGER NOT NULL DEFAULT 0;

