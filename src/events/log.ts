import { modeOf } from "../modes.js";
import type { Sql } from "../db/sql.js";
import { exactStringify } from "../exact-json.js";
import type { EventType } from "./types.js";

export type NewEvent = { clientId: string; userId?: string | null; type: EventType; object: Record<string, unknown> };

const RECORD_EVENT = `
  WITH position AS (
    SELECT pg_current_xact_id()::text::bigint AS xid, nextval(pg_get_serial_sequence('events', 'seq')) AS seq
  ), event AS (
    INSERT INTO "events" ("id", "xid", "seq", "clientId", "userId", "type", "data")
    SELECT 'evt_' || lpad(to_hex(xid), 16, '0') || lpad(to_hex(seq), 16, '0'), xid, seq, $1::uuid, $2::uuid, $3::text, $4::json
    FROM position
    RETURNING "id"
  )
  INSERT INTO "webhook_deliveries" ("id", "clientId", "eventId", "endpointId", "state", "nextAttemptAt")
  SELECT gen_random_uuid(), $1::uuid, event."id", endpoint."id", 'PENDING', now()
  FROM event, "webhook_endpoints" endpoint
  WHERE endpoint."clientId" = $1::uuid AND endpoint."enabled"
    AND (coalesce(cardinality(endpoint."eventTypes"), 0) = 0 OR $3::text = ANY(endpoint."eventTypes"))`;

/**
 * Appends an event in the caller's transaction, and in the same statement queues its delivery to
 * each of the client's enabled webhook endpoints that takes its type: the change, its event and
 * its deliveries commit together or not at all. Every delivery is queued, however many wait: what
 * bounds the work is how many are sent at once (per endpoint and per client, see DeliveryWorker).
 *
 * The id is `evt_` + the writing transaction's id + a sequence number (16 hex digits each), so ids
 * sort like (xid, seq), the order in which readers walk the log. Clients never see it: they see
 * their own encryption of it (see EventIds).
 */
export async function recordEvent(tx: Sql, event: NewEvent): Promise<void> {
  // The object says its mode like every resource (SPEC §15); the event's own `livemode` is read from it.
  const livemode = (await modeOf(tx, event.clientId)) === "live";
  // Written exactly: jsonb keeps a number's every digit (it stores numeric), so an 18-decimal amount reads back as REST shows it.
  await tx.query("event_record", RECORD_EVENT, [event.clientId, event.userId ?? null, event.type, exactStringify({ object: { ...event.object, livemode } })]);
}

/** Both parts are PostgreSQL bigints, so each starts with a hex digit below 8. */
const EVENT_ID = /^evt_([0-7][0-9a-f]{15})([0-7][0-9a-f]{15})$/;

/** A place in the log: events sort by (xid, seq). */
export type Position = { xid: bigint; seq: bigint };

/** Before every event. */
export const LOG_START: Position = { xid: -1n, seq: -1n };
/** After every event (the largest bigint). */
const LOG_END: Position = { xid: 2n ** 63n - 1n, seq: 2n ** 63n - 1n };

/** The (xid, seq) position an event id encodes; undefined when the text is not an event id. */
export function positionOf(id: string): Position | undefined {
  const match = EVENT_ID.exec(id);
  return match ? { xid: BigInt(`0x${match[1]}`), seq: BigInt(`0x${match[2]}`) } : undefined;
}

/** The log's id of a position (the format recordEvent writes); undefined for LOG_START. */
export function idOf(position: Position): string | undefined {
  if (comparePositions(position, LOG_START) === 0) return undefined;
  const hex = (value: bigint) => value.toString(16).padStart(16, "0");
  return `evt_${hex(position.xid)}${hex(position.seq)}`;
}

/** Negative, zero or positive as `a` comes before, at or after `b`. */
export const comparePositions = (a: Position, b: Position) => (a.xid === b.xid ? Number(a.seq - b.seq) : a.xid < b.xid ? -1 : 1);

/**
 * An event as the log holds it. `data` is the text of the jsonb the writer stored (always {object}),
 * read as text so that no number passes through a double (EventIds.clientEvent parses it exactly).
 */
export type EventRow = { id: string; type: string; data: string; createdAt: Date };

export type LogQuery = {
  clientId: string;
  after?: Position;
  /** Only events at or before this position (the shared tail's head, see EventTail). */
  upTo?: Position;
  limit: number;
  types?: readonly string[];
  userId?: string;
};

const READ_LOG = `
  SELECT "id", "type", "data"::text AS "data", "createdAt" FROM "events"
  WHERE "clientId" = $1::uuid
    AND ("xid", "seq") > ($2::bigint, $3::bigint)
    AND ("xid", "seq") <= ($7::bigint, $8::bigint)
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
export async function readLog(sql: Sql, query: LogQuery): Promise<{ rows: EventRow[]; hasMore: boolean }> {
  const from = query.after ?? LOG_START;
  const to = query.upTo ?? LOG_END;
  const types = query.types?.length ? [...query.types] : null;
  const values = [query.clientId, String(from.xid), String(from.seq), types, query.userId ?? null, query.limit + 1, String(to.xid), String(to.seq)];
  const rows = await sql.query<EventRow>("events_read", READ_LOG, values);
  return { rows: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
}

const READ_EVENT = `SELECT "id", "type", "data"::text AS "data", "createdAt" FROM "events" WHERE "id" = $1 AND "clientId" = $2::uuid`;

/** One of a client's events by its log id; undefined when it has none of that id. */
export async function readEvent(sql: Sql, clientId: string, id: string): Promise<EventRow | undefined> {
  const [row] = await sql.query<EventRow>("event_read", READ_EVENT, [id, clientId]);
  return row;
}

const NEWEST_EVENT = `SELECT "id" FROM "events"
  WHERE "clientId" = $1::uuid AND "xid" < pg_snapshot_xmin(pg_current_snapshot())::text::bigint
  ORDER BY "xid" DESC, "seq" DESC LIMIT 1`;

/** The id of the client's newest readable event (the point a live stream without a cursor starts from). */
export async function newestEventId(sql: Sql, clientId: string): Promise<string | undefined> {
  const [row] = await sql.query<{ id: string }>("events_newest", NEWEST_EVENT, [clientId]);
  return row?.id;
}

/** An event as the shared tail reads it: with what its subscribers filter on. */
export type TailRow = EventRow & { xid: string; seq: string; clientId: string; userId: string | null };

const READ_TAIL = `
  SELECT "id", "xid"::text, "seq"::text, "clientId"::text, "userId"::text, "type", "data"::text AS "data", "createdAt" FROM "events"
  WHERE ("xid", "seq") > ($1::bigint, $2::bigint)
    AND "xid" < pg_snapshot_xmin(pg_current_snapshot())::text::bigint
  ORDER BY "xid", "seq"
  LIMIT $3`;

/** Every client's events after a position, in log order, under readLog's visibility rule. */
export function readTail(sql: Sql, after: Position, limit: number): Promise<TailRow[]> {
  return sql.query<TailRow>("events_tail", READ_TAIL, [String(after.xid), String(after.seq), limit]);
}

const NEWEST_POSITION = `SELECT "xid"::text, "seq"::text FROM "events"
  WHERE "xid" < pg_snapshot_xmin(pg_current_snapshot())::text::bigint
  ORDER BY "xid" DESC, "seq" DESC LIMIT 1`;

/** The position of the newest readable event of any client (LOG_START on an empty log). */
export async function newestPosition(sql: Sql): Promise<Position> {
  const [row] = await sql.query<{ xid: string; seq: string }>("events_newest_position", NEWEST_POSITION, []);
  return row ? { xid: BigInt(row.xid), seq: BigInt(row.seq) } : LOG_START;
}
