import type { Sql } from "../db/sql.js";
import type { PrismaClient } from "../generated/prisma/client.js";
import type { Logger } from "../logger.js";
import type { Events } from "../pubsub/events.js";
import { badInput, notFound } from "../errors.js";
import { asClientEvent, newestEventId, positionOf, readLog } from "./log.js";
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

/** A cursor given by a caller: an event id (any client's id is well-formed; the feed is scoped anyway). */
export function parseCursor(after: string | null | undefined): string | undefined {
  if (after == null) return undefined;
  if (!positionOf(after)) throw badInput("after must be an event id (evt_…)");
  return after;
}

/** The events feed: a client's own events, oldest first after a cursor. */
export class EventService {
  private readonly prisma: PrismaClient;
  private readonly sql: Sql;
  /** One per instance: every live subscription is served by it. */
  private readonly liveTail: EventTail;

  constructor(deps: { prisma: PrismaClient; sql: Sql; bus: Events; logger: Logger }) {
    this.prisma = deps.prisma;
    this.sql = deps.sql;
    this.liveTail = new EventTail({ sql: deps.sql, bus: deps.bus, logger: deps.logger });
  }

  list(clientId: string, args: { after?: string | null; first?: number | null; types?: readonly string[] | null }) {
    const limit = args.first ?? DEFAULT_PAGE;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) throw badInput(`the page size (first; limit on REST) must be an integer from 1 to ${MAX_PAGE}`);
    return readLog(this.sql, { clientId, after: parseCursor(args.after), limit, types: parseEventTypes(args.types, "types") });
  }

  /** The feed as a live stream (see EventTail.stream). */
  tail(filter: TailFilter, after?: string) {
    return this.liveTail.stream(filter, after);
  }

  /**
   * The id of the newest event the client can read now (null when none): a subscription given it
   * as `after` misses nothing that happens once this has answered, however late it is registered.
   */
  async cursor(clientId: string): Promise<string | null> {
    return (await newestEventId(this.sql, clientId)) ?? null;
  }

  async get(clientId: string, id: string): Promise<ClientEvent> {
    const row = positionOf(id) ? await this.prisma.event.findFirst({ where: { id, clientId } }) : null;
    if (!row) throw notFound("Event");
    return asClientEvent(row);
  }
}
