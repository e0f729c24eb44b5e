-- Each quote counts and deletes its client's unused quotes (src/conversion/service.ts).
-- CreateIndex
CREATE INDEX "conversion_quotes_clientId_createdAt_idx" ON "conversion_quotes"("clientId", "createdAt");
