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
