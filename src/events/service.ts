import type { Sql } from "../db/sql.js";
import type { PrismaClient } from "../generated/prisma/client.js";
import type { Logger } from "../logger.js";
import type { Events } from "../pubsub/events.js";
import { badInput, notFound } from "../errors.js";
import type { EventIds } from "./ids.js";
import { newestEventId, readLog, type Position } from "./log.js";
import { EventTail, type TailFilter } from "./tail.js";
import { EVENT_TYPES, type ClientEvent } from "./types.js";

export const MAX_PAGE = 100;
const DEFAULT_PAGE = 20;

/** Event types named by a caller, checked against the list (a typo must not silently match nothing). */
export function parseEventTypes(types: readonly string[] | null | undefined, field: string): string[] {
  const list = types ?? [];
  const unknown = list.filter((type) => !(EVENT_TYPES as readonly string[]).includes(type));
  if (unknown.length) throw badInput(`${field}: unknown event type ${unknown.join(", ")}; one of ${EVENT_TYPES.join(", ")}`);
  return [...new Set(list)];
}

/** The events feed: a client's own events, oldest first after a cursor. */
export class EventService {
  private readonly prisma: PrismaClient;
  private readonly sql: Sql;
  private readonly ids: EventIds;
  /** One per instance: every live subscription is served by it. */
  private readonly liveTail: EventTail;

  constructor(deps: { prisma: PrismaClient; sql: Sql; bus: Events; ids: EventIds; logger: Logger }) {
    this.prisma = deps.prisma;
    this.sql = deps.sql;
    this.ids = deps.ids;
    this.liveTail = new EventTail({ sql: deps.sql, bus: deps.bus, ids: deps.ids, logger: deps.logger });
  }

  async list(clientId: string, args: { after?: string | null; first?: number | null; types?: readonly string[] | null }) {
    const limit = args.first ?? DEFAULT_PAGE;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) throw badInput(`the page size (first; limit on REST) must be an integer from 1 to ${MAX_PAGE}`);
    const page = await readLog(this.sql, { clientId, after: this.cursorPosition(clientId, args.after), limit, types: parseEventTypes(args.types, "types") });
    return { events: page.rows.map((row) => this.ids.clientEvent(clientId, row)), hasMore: page.hasMore };
  }

  /** The feed as a live stream (see EventTail.stream); `after` is checked here, before anything streams. */
  tail(filter: TailFilter, after: string | null | undefined) {
    return this.liveTail.stream(filter, this.cursorPosition(filter.clientId, after));
  }

  /**
   * The id of the newest event the client can read now (null when none): a subscription given it
   * as `after` misses nothing that happens once this has answered, however late it is registered.
   */
  async cursor(clientId: string): Promise<string | null> {
    const newest = await newestEventId(this.sql, clientId);
    return newest ? this.ids.visible(clientId, newest) : null;
  }

  async get(clientId: string, id: string): Promise<ClientEvent> {
    const logId = this.ids.logId(clientId, id);
    const row = logId ? await this.prisma.event.findFirst({ where: { id: logId, clientId } }) : null;
    if (!row) throw notFound("Event");
    return this.ids.clientEvent(clientId, row);
  }

  /** A cursor given by the client: one of its event ids (another client's means nothing here). */
  private cursorPosition(clientId: string, after: string | null | undefined): Position | undefined {
    if (after == null) return undefined;
    const position = this.ids.position(clientId, after);
    if (!position) throw badInput("after must be an event id (evt_…)");
    return position;
  }
}
