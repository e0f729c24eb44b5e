import { badInput } from "../errors.js";
import { isUuid } from "../validation.js";

/** plugin-prisma's cursor of a record by its id: base64 of `GPC:S:<id>`. */
const ID_CURSOR = /^GPC:S:(.*)$/s;

/**
 * Connection cursors are opaque, but the one a client sends must name a record id: a forged or
 * foreign one is a 400 here, before the database would refuse it as a malformed UUID.
 */
export function checkIdCursors(args: { after?: string | null; before?: string | null }): void {
  for (const [name, cursor] of [["after", args.after], ["before", args.before]] as const) {
    if (cursor == null) continue;
    const id = ID_CURSOR.exec(Buffer.from(cursor, "base64").toString("utf8"))?.[1];
    if (!id || !isUuid(id)) throw badInput(`${name} must be a cursor this connection returned`);
  }
}

/**
 * The connection cursor of a record id, for REST lists that page `after` an id (text that is not
 * an id becomes a cursor checkIdCursors refuses, naming the argument).
 */
export function idCursor(value: unknown): unknown {
  return typeof value === "string" ? Buffer.from(`GPC:S:${value}`).toString("base64") : value;
}
