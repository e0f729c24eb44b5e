import type { Sql } from "../db/sql.js";
import type { Logger } from "../logger.js";
import type { Events } from "../pubsub/events.js";
import { AppError, badInput, notFound } from "../errors.js";
import type { Permissions } from "../caller/permissions.js";
import type { EventIds } from "./ids.js";
import { newestEventId, readEvent, readLog, type Position } from "./log.js";
import { EventTail } from "./tail.js";
import { assertReadable, EVENT_TYPES, readableEventTypes, type ClientEvent, type EventType } from "./types.js";

export const MAX_PAGE = 100;
const DEFAULT_PAGE = 20;

/** Event types named by a caller, checked against the list (a typo must not silently match nothing). */
export function parseEventTypes(types: readonly string[] | null | undefined, field: string): EventType[] {
  const list = types ?? [];
  const unknown = list.filter((type) => !(EVENT_TYPES as readonly string[]).includes(type));
  if (unknown.length) throw badInput(`${field}: unknown event type ${unknown.join(", ")}; one of ${EVENT_TYPES.join(", ")}`);
  return [...new Set(list as EventType[])];
}

/** Who reads events: the client, and the caller's grants (null: a full key or a session), which decide the types it sees. */
export type EventReader = { clientId: string; permissions: Permissions | null };

/** The events feed: a client's own events, oldest first after a cursor, of the types the caller may read. */
export class EventService {
  private readonly sql: Sql;
  private readonly ids: EventIds;
  /** One per instance: every live subscription is served by it. */
  private readonly liveTail: EventTail;

  constructor(deps: { sql: Sql; bus: Events; ids: EventIds; logger: Logger }) {
    this.sql = deps.sql;
    this.ids = deps.ids;
    this.liveTail = new EventTail({ sql: deps.sql, bus: deps.bus, ids: deps.ids, logger: deps.logger });
  }

  async list(reader: EventReader, args: { after?: string | null; first?: number | null; types?: readonly string[] | null }) {
    const { clientId } = reader;
    const limit = args.first ?? DEFAULT_PAGE;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) throw badInput(`the page size (first; limit on REST) must be an integer from 1 to ${MAX_PAGE}`);
    const types = readableEventTypes(reader.permissions, parseEventTypes(args.types, "types"));
    const page = await readLog(this.sql, { clientId, after: this.cursorPosition(clientId, args.after), limit, types });
    return { events: page.rows.map((row) => this.ids.clientEvent(clientId, row)), hasMore: page.hasMore };
  }

  /**
   * The feed as a live stream (see EventTail.stream) of the `types` asked for (every type when empty)
   * that the reader may read; the types and `after` are checked here, before anything streams.
   */
  tail(reader: EventReader, filter: { userId?: string; types: readonly EventType[] }, after: string | null | undefined) {
    const types = readableEventTypes(reader.permissions, filter.types);
    return this.liveTail.stream({ ...filter, clientId: reader.clientId, types }, this.cursorPosition(reader.clientId, after));
  }

  /**
   * The id of the newest event the client can read now (null when none): a subscription given it
   * as `after` misses nothing that happens once this has answered, however late it is registered.
   */
  async cursor(clientId: string): Promise<string | null> {
    const newest = await newestEventId(this.sql, clientId);
    return newest ? this.ids.visible(clientId, newest) : null;
  }

  /** One event; a type the reader may not read is a 403 naming the permission. */
  async get(reader: EventReader, id: string): Promise<ClientEvent> {
    const { clientId } = reader;
    const logId = this.ids.logId(clientId, id);
    const row = logId ? await readEvent(this.sql, clientId, logId) : undefined;
    if (!row) throw notFound("Event");
    assertReadable(reader.permissions, [row.type as EventType]);
    return this.ids.clientEvent(clientId, row);
  }

  /**
   * A cursor given by the client: only an id it was given (see EventIds). Another client's id, or
   * the log's own position (`evt_` + 32 hex digits, which would let a caller walk the shared
   * transaction ids), is a 400 naming `after`.
   */
  private cursorPosition(clientId: string, after: string | null | undefined): Position | undefined {
    if (after == null) return undefined;
    const position = this.ids.position(clientId, after);
    if (!position) throw new AppError("BAD_USER_INPUT", "after must be the id of one of your events (evt_…)", { param: "after" });
    return position;
  }
}
