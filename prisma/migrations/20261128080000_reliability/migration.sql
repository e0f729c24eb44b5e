-- An event's data is kept as the text it was written (json, not jsonb): jsonb would reorder its keys.
-- Its numbers were exact in jsonb already (numeric); json keeps REST's key order too, so the log, the
-- feed, webhook bodies and SSE frames carry the very text REST shows. Events written before keep the
-- order jsonb gave them.
-- AlterTable
ALTER TABLE "events" ALTER COLUMN "data" SET DATA TYPE JSON USING "data"::json;
