-- Stored responses were plain text (a new API key, a card number and CVV could sit there for 24 hours).
-- They are dropped; records keep their state, so a key already used still never runs again.
-- From now on the execution result is kept AES-256-GCM encrypted.
ALTER TABLE "idempotency_records" DROP COLUMN "responseBody",
DROP COLUMN "responseStatus",
ADD COLUMN     "result" TEXT;
