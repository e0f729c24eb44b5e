-- Sends after a reorg deeper than the confirmation depth (issue 35): a CONFIRMED send whose transaction left
-- the chain is sent again and keeps, in "reorgedAt", when that was found (reconciliation and the operator's
-- report count the ones not yet confirmed again). The sender finds the recently confirmed sends by block.
-- AlterTable
ALTER TABLE "chain_sends" ADD COLUMN "reorgedAt" TIMESTAMPTZ(3);

-- CreateIndex
CREATE INDEX "chain_sends_chainId_blockNumber_idx" ON "chain_sends"("chainId", "blockNumber");
