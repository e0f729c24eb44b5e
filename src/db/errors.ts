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
 * The SQLSTATE sits at different depths depending on the driver adapter, so the error's causes are searched.
 */
export function isInvalidTextError(err: unknown): boolean {
  const seen = new Set<unknown>();
  const visit = (value: unknown, depth: number): boolean => {
    if (!value || typeof value !== "object" || depth > 6 || seen.has(value)) return false;
    seen.add(value);
    const record = value as Record<string, unknown>;
    for (const key of ["code", "originalCode", "sqlState"]) {
      if (typeof record[key] === "string" && INVALID_TEXT.has(record[key] as string)) return true;
    }
    return ["cause", "meta", "driverAdapterError", "originalError"].some((key) => visit(record[key], depth + 1));
  };
  return visit(err, 0);
}
