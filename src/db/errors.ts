import { Prisma } from "../generated/prisma/client.js";

/**
 * A unique-constraint violation, as Prisma reports it on PostgreSQL (P2002) or as the embedded
 * adapter passes it through (the raw SQLSTATE 23505).
 */
export function isUniqueViolation(err: unknown): boolean {
  if (err instanceof Prisma.PrismaClientKnownRequestError) return err.code === "P2002";
  const cause = (err as { cause?: { code?: string } })?.cause;
  return cause?.code === "23505";
}

/** SQLSTATEs of text PostgreSQL cannot store: invalid byte sequence (22021), untranslatable character (22P05). */
const INVALID_TEXT = new Set(["22021", "22P05"]);

/**
 * Text the database refused to store (a NUL byte, say): a caller's mistake, not a server fault.
 */
export const isInvalidTextError = (err: unknown): boolean => someCause(err, (record) => codesOf(record).some((code) => INVALID_TEXT.has(code)));

/** Network failures on the way to the database, and Prisma's codes for them (can't reach, closed, pool time-out). */
const UNREACHABLE = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH", "ENETUNREACH", "P1001", "P1002", "P1008", "P1017", "P2024"]);
/** SQLSTATEs: connection exceptions (class 08) and a server shutting down or starting (57P01–57P03). */
const UNAVAILABLE_STATE = /^(08[0-9A-Z]{3}|57P0[1-3])$/;
const LOST_CONNECTION = /Connection terminated|timeout exceeded when trying to connect|connection error|Can't reach database server|Server has closed the connection/i;

/**
 * The database could not be reached, or dropped the connection: the request may succeed once it is
 * back (503 with Retry-After), unlike a fault in the request or the code.
 */
export const isDatabaseUnavailable = (err: unknown): boolean =>
  someCause(err, (record) => {
    if (codesOf(record).some((code) => UNREACHABLE.has(code) || UNAVAILABLE_STATE.test(code))) return true;
    return typeof record.message === "string" && LOST_CONNECTION.test(record.message);
  });

const codesOf = (record: Record<string, unknown>) =>
  ["code", "originalCode", "sqlState"].map((key) => record[key]).filter((value): value is string => typeof value === "string");

/** The SQLSTATE or cause sits at different depths depending on the driver adapter, so the error's causes are searched. */
function someCause(err: unknown, test: (record: Record<string, unknown>) => boolean): boolean {
  const seen = new Set<unknown>();
  const visit = (value: unknown, depth: number): boolean => {
    if (!value || typeof value !== "object" || depth > 6 || seen.has(value)) return false;
    seen.add(value);
    const record = value as Record<string, unknown>;
    if (test(record)) return true;
    return ["cause", "meta", "driverAdapterError", "originalError", "errors"].some((key) => visit(record[key], depth + 1));
  };
  return visit(err, 0);
}

/** A number the column's type cannot hold (SQLSTATE 22003: numeric field overflow, out of range). */
export const isNumericOverflow = (err: unknown): boolean => someCause(err, (record) => codesOf(record).includes("22003"));
