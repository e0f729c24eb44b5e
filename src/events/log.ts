import { Prisma, type PrismaClient } from "../generated/prisma/client.js";
import type { Tx } from "../db/transaction.js";
import type { ClientEvent, EventType } from "./types.js";

export type NewEvent = { clientId: string; userId?: string | null; type: EventType; object: Record<string, unknown> };

/**
 * Appends an event in the caller's transaction, and in the same statement queues its delivery to
 * each of the client's enabled webhook endpoints that takes its type: the change, its event and
 * its deliveries commit together or not at all.
 *
 * The id is `evt_` + the writing transaction's id + a sequence number (16 hex digits each), so ids
 * sort like (xid, seq), the order in which readers walk the log (see EventFeed).
 */
export async function recordEvent(tx: Tx, event: NewEvent): Promise<void> {
  await tx.$executeRaw`
    WITH position AS (
      SELECT pg_current_xact_id()::text::bigint AS xid, nextval(pg_get_serial_sequence('events', 'seq')) AS seq
    ), event AS (
      INSERT INTO "events" ("id", "xid", "seq", "clientId", "userId", "type", "data")
      SELECT 'evt_' || lpad(to_hex(xid), 16, '0') || lpad(to_hex(seq), 16, '0'), xid, seq,
             ${event.clientId}::uuid, ${event.userId ?? null}::uuid, ${event.type}, ${JSON.stringify({ object: event.object })}::jsonb
      FROM position
      RETURNING "id"
    )
    INSERT INTO "webhook_deliveries" ("id", "clientId", "eventId", "endpointId")
    SELECT gen_random_uuid(), ${event.clientId}::uuid, event."id", endpoint."id"
    FROM event, "webhook_endpoints" endpoint
    WHERE endpoint."clientId" = ${event.clientId}::uuid AND endpoint."enabled"
      AND (coalesce(cardinality(endpoint."eventTypes"), 0) = 0 OR ${event.type} = ANY(endpoint."eventTypes"))`;
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

/**
 * Reads a client's log in (xid, seq) order. Only events whose transaction id is below the oldest
 * transaction still running are shown: every transaction that could still add an event before
 * them has finished, so a reader that has seen up to an event will never find a new one behind
 * it (a bigserial alone would let a transaction that drew a smaller number commit later, unseen).
 * The price: an event shows once the transactions that started before it have ended.
 */
export async function readLog(db: PrismaClient | Tx, query: LogQuery): Promise<{ events: ClientEvent[]; hasMore: boolean }> {
  const from = query.after === undefined ? { xid: -1n, seq: -1n } : positionOf(query.after);
  if (!from) throw new Error("readLog needs a valid event id as its cursor");
  const rows = await db.$queryRaw<EventRow[]>`
    SELECT "id", "type", "data", "createdAt" FROM "events"
    WHERE "clientId" = ${query.clientId}::uuid
      AND ("xid", "seq") > (${from.xid}, ${from.seq})
      AND "xid" < pg_snapshot_xmin(pg_current_snapshot())::text::bigint
      ${query.types?.length ? Prisma.sql`AND "type" = ANY(${[...query.types]}::text[])` : Prisma.empty}
      ${query.userId ? Prisma.sql`AND "userId" = ${query.userId}::uuid` : Prisma.empty}
    ORDER BY "xid", "seq"
    LIMIT ${query.limit + 1}`;
  return { events: rows.slice(0, query.limit).map(asClientEvent), hasMore: rows.length > query.limit };
}

/** The id of the client's newest readable event (the point a live stream without a cursor starts from). */
export async function newestEventId(db: PrismaClient, clientId: string): Promise<string | undefined> {
  const [row] = await db.$queryRaw<{ id: string }[]>`
    SELECT "id" FROM "events"
    WHERE "clientId" = ${clientId}::uuid AND "xid" < pg_snapshot_xmin(pg_current_snapshot())::text::bigint
    ORDER BY "xid" DESC, "seq" DESC LIMIT 1`;
  return row?.id;
}
