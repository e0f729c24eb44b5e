-- The shared events tail (src/events/tail.ts) reads every client's events in (xid, seq) order.
-- CreateIndex
CREATE INDEX "events_xid_seq_idx" ON "events"("xid", "seq");
