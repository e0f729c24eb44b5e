-- A chain deposit is identified by what its transfer is, not where it was last seen: a re-mined
-- transaction may carry its transfers at other log indexes (issue 35, item 1).
-- "transferKey": token:from:to:value#ordinal (the ordinal among identical transfers of the
-- transaction); null for the rows recorded before it, which are still matched by their log index.
ALTER TABLE "chain_deposits" ADD COLUMN "transferKey" TEXT;
-- How the chain row settled: COMPLETED or FAILED (null while open).
ALTER TABLE "chain_deposits" ADD COLUMN "outcome" TEXT;
-- Why an operator must look at this deposit (ORPHANED: completed, and its transfer left the
-- canonical chain in a reorg deeper than the depth; UNSETTLEABLE: its settlement was refused), and since when.
ALTER TABLE "chain_deposits" ADD COLUMN "flag" TEXT;
ALTER TABLE "chain_deposits" ADD COLUMN "flaggedAt" TIMESTAMPTZ(3);

UPDATE "chain_deposits" cd SET "outcome" = d."status"
FROM "deposits" d WHERE d."id" = cd."depositId" AND cd."settledAt" IS NOT NULL AND d."status" IN ('COMPLETED', 'FAILED');

-- The log index is where the transfer was last seen, no longer its identity.
DROP INDEX "chain_deposits_chainId_transactionHash_logIndex_key";
CREATE INDEX "chain_deposits_chainId_transactionHash_idx" ON "chain_deposits"("chainId", "transactionHash");

-- One live deposit per on-chain transfer; a FAILED one gives its transfer up (mined again later, it is a new deposit).
CREATE UNIQUE INDEX "chain_deposits_transfer_key" ON "chain_deposits"("chainId", "transactionHash", "transferKey") WHERE "outcome" IS DISTINCT FROM 'FAILED';

CREATE INDEX "chain_deposits_flag_idx" ON "chain_deposits"("chainId", "flag") WHERE "flag" IS NOT NULL;
