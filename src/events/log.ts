import type { Sql } from "../db/sql.js";
import type { ClientEvent, EventType } from "./types.js";

export type NewEvent = { clientId: string; userId?: string | null; type: EventType; object: Record<string, unknown> };

const RECORD_EVENT = `
  WITH position AS (
    SELECT pg_current_xact_id()::text::bigint AS xid, nextval(pg_get_serial_sequence('events', 'seq')) AS seq
  ), event AS (
    INSERT INTO "events" ("id", "xid", "seq", "clientId", "userId", "type", "data")
    SELECT 'evt_' || lpad(to_hex(xid), 16, '0') || lpad(to_hex(seq), 16, '0'), xid, seq, $1::uuid, $2::uuid, $3::text, $4::jsonb
    FROM position
    RETURNING "id"
  )
  INSERT INTO "webhook_deliveries" ("id", "clientId", "eventId", "endpointId")
  SELECT gen_random_uuid(), $1::uuid, event."id", endpoint."id"
  FROM event, "webhook_endpoints" endpoint
  WHERE endpoint."clientId" = $1::uuid AND endpoint."enabled"
    AND (coalesce(cardinality(endpoint."eventTypes"), 0) = 0 OR $3::text = ANY(endpoint."eventTypes"))`;

/**
 * Appends an event in the caller's transaction, and in the same statement queues its delivery to
 * each of the client's enabled webhook endpoints that takes its type: the change, its event and
 * its deliveries commit together or not at all.
 *
 * The id is `evt_` + the writing transaction's id + a sequence number (16 hex digits each), so ids
 * sort like (xid, seq), the order in which readers walk the log (see EventFeed).
 */
export async function recordEvent(tx: Sql, event: NewEvent): Promise<void> {
  await tx.query("event_record", RECORD_EVENT, [event.clientId, event.userId ?? null, event.type, JSON.stringify({ object: event.object })]);
}

/** Both parts are PostgreSQL bigints, so each starts with a hex digit below 8. */
const EVENT_ID = /^evt_([0-7][0-9a-f]{15})([0-7][0-9a-f]{15})$/;

/** The (xid, seq) position an event id encodes; undefined when the text is not an event id. */
export function positionOf(id: string): { xid: bigint; seq: bigint } | undefined {
  const match = EVENT_ID.exec(id);
  return match ? { xid: BigInt(`0x${match[1]}`), seq: BigInt(`0x${match[2]}`) } : undefined;
}

/** `data` is the jsonb the writer stored: always {object}. */
type EventRow = { id: string; type: string; data: unknown; createdAt: Date };

export const asClientEvent = (row: EventRow): ClientEvent => ({
  id: row.id,
  type: row.type,
  createdAt: row.createdAt.toISOString(),
  data: row.data as ClientEvent["data"],
});

export type LogQuery = { clientId: string; after?: string; limit: number; types?: readonly string[]; userId?: string };

const READ_LOG = `
  SELECT "id", "type", "data", "createdAt" FROM "events"
  WHERE "clientId" = $1::uuid
    AND ("xid", "seq") > ($2::bigint, $3::bigint)
    AND "xid" < pg_snapshot_xmin(pg_current_snapshot())::text::bigint
    AND ($4::text[] IS NULL OR "type" = ANY($4::text[]))
    AND ($5::uuid IS NULL OR "userId" = $5::uuid)
  ORDER BY "xid", "seq"
  LIMIT $6`;

/**
 * Reads a client's log in (xid, seq) order. Only events whose transaction id is below the oldest
 * transaction still running are shown: every transaction that could still add an event before
 * them has finished, so a reader that has seen up to an event will never find a new one behind
 * it (a bigserial alone would let a transaction that drew a smaller number commit later, unseen).
 * The price: an event shows once the transactions that started before it have ended.
 */
export async function readLog(sql: Sql, query: LogQuery): Promise<{ events: ClientEvent[]; hasMore: boolean }> {
  const from = query.after === undefined ? { xid: -1n, seq: -1n } : positionOf(query.after);
  if (!from) throw new Error("readLog needs a valid event id as its cursor");
  const types = query.types?.length ? [...query.types] : null;
  const rows = await sql.query<EventRow>("events_read", READ_LOG, [query.clientId, String(from.xid), String(from.seq), types, query.userId ?? null, query.limit + 1]);
  return { events: rows.slice(0, query.limit).map(asClientEvent), hasMore: rows.length > query.limit };
}

const NEWEST_EVENT = `SELECT "id" FROM "events"
  WHERE "clientId" = $1::uuid AND "xid" < pg_snapshot_xmin(pg_current_snapshot())::text::bigint
  ORDER BY "xid" DESC, "seq" DESC LIMIT 1`;

/** The id of the client's newest readable event (the point a live stream without a cursor starts from). */
export async function newestEventId(sql: Sql, clientId: string): Promise<string | undefined> {
  const [row] = await sql.query<{ id: string }>("events_newest", NEWEST_EVENT, [clientId]);
  return row?.id;
}
