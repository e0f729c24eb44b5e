import type { Sql } from "../db/sql.js";
import type { PrismaClient } from "../generated/prisma/client.js";
import { badInput, notFound } from "../errors.js";
import { asClientEvent, positionOf, readLog } from "./log.js";
import { tailLog, type TailOptions } from "./tail.js";
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
  constructor(
    private readonly prisma: PrismaClient,
    private readonly sql: Sql,
  ) {}

  list(clientId: string, args: { after?: string | null; first?: number | null; types?: readonly string[] | null }) {
    const limit = args.first ?? DEFAULT_PAGE;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) throw badInput(`the page size (first; limit on REST) must be an integer from 1 to ${MAX_PAGE}`);
    return readLog(this.sql, { clientId, after: parseCursor(args.after), limit, types: parseEventTypes(args.types, "types") });
  }

  /** The feed as a live stream (see tailLog). */
  tail(options: Omit<TailOptions, "sql">) {
    return tailLog({ ...options, sql: this.sql });
  }

  async get(clientId: string, id: string): Promise<ClientEvent> {
    const row = positionOf(id) ? await this.prisma.event.findFirst({ where: { id, clientId } }) : null;
    if (!row) throw notFound("Event");
    return asClientEvent(row);
  }
}
