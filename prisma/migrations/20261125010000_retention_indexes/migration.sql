-- Retention (src/retention/job.ts) finds old rows by age, and checks what still refers to them.
CREATE INDEX "events_createdAt_idx" ON "events"("createdAt");
CREATE INDEX "webhook_deliveries_eventId_idx" ON "webhook_deliveries"("eventId");
CREATE INDEX "webhook_delivery_attempts_createdAt_idx" ON "webhook_delivery_attempts"("createdAt");
CREATE INDEX "conversion_quotes_expiresAt_idx" ON "conversion_quotes"("expiresAt");
CREATE INDEX "conversions_quoteId_idx" ON "conversions"("quoteId");
CREATE INDEX "otp_codes_createdAt_idx" ON "otp_codes"("createdAt");
CREATE INDEX "sessions_expiresAt_idx" ON "sessions"("expiresAt");
CREATE INDEX "api_keys_revokedAt_idx" ON "api_keys"("revokedAt");
