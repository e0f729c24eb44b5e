-- Every event counts its endpoints' pending deliveries (the queue's cap, src/events/log.ts).
-- CreateIndex
CREATE INDEX "webhook_deliveries_endpointId_state_idx" ON "webhook_deliveries"("endpointId", "state");
