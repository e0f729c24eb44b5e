import type { GraphQLError, Source, SourceLocation } from "graphql";
import type { PrismaClient } from "../generated/prisma/client.js";
import { isUniqueViolation } from "../db/errors.js";
import { AppError } from "../errors.js";
import { ApiError, type ApiErrorExtensions } from "../graphql/errors.js";
import { decrypt, encrypt } from "../providers/encryption.js";

const RETENTION_MS = 24 * 60 * 60_000;
const SWEEP_INTERVAL_MS = 60_000;

/** What is kept of an execution result: its data, and its errors as callers saw them. */
type StoredResult = {
  data?: Record<string, unknown> | null;
  errors?: {
    message: string;
    locations?: readonly SourceLocation[];
    path?: readonly (string | number)[];
    extensions: ApiErrorExtensions;
  }[];
};

export type ReplayedResult = { data?: Record<string, unknown> | null; errors?: GraphQLError[] };

/**
 * Idempotency records, per client and key, kept 24 hours. A record is claimed (IN_PROGRESS) before
 * the operation runs and completed with its result, which is stored encrypted: results can hold
 * secrets shown once (a new API key, a card number).
 */
export class IdempotencyRecords {
  private lastSweep = 0;

  constructor(private readonly deps: { prisma: PrismaClient; encryptionKey: Buffer }) {}

  /**
   * Claims the key for this request. Returns null when this request is the first (it must run), or the
   * first one's result to replay; throws 422 when the key was used for another request, 409 while the
   * first is still running.
   */
  async claim(clientId: string, key: string, requestHash: string, source?: Source): Promise<ReplayedResult | null> {
    const { prisma } = this.deps;
    const now = new Date();
    // Expired records go at most once a minute per instance; this key's own expired record goes now.
    const sweepAll = now.getTime() - this.lastSweep > SWEEP_INTERVAL_MS;
    if (sweepAll) this.lastSweep = now.getTime();
    await prisma.idempotencyRecord.deleteMany({ where: sweepAll ? { expiresAt: { lt: now } } : { clientId, key, expiresAt: { lt: now } } });
    try {
      await prisma.idempotencyRecord.create({
        data: { clientId, key, requestHash, state: "IN_PROGRESS", expiresAt: new Date(now.getTime() + RETENTION_MS) },
      });
      return null;
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
    }
    const existing = await prisma.idempotencyRecord.findUnique({ where: { clientId_key: { clientId, key } } });
    if (!existing) throw new AppError("CONFLICT", "A request with this Idempotency-Key is still in progress");
    if (existing.requestHash !== requestHash) {
      throw new AppError("IDEMPOTENCY_MISMATCH", "This Idempotency-Key was used with a different request", { param: "Idempotency-Key" });
    }
    if (existing.state !== "COMPLETED") throw new AppError("CONFLICT", "A request with this Idempotency-Key is still in progress");
    if (existing.result === null) {
      throw new AppError("CONFLICT", "The request with this Idempotency-Key already ran; its result is no longer available");
    }
    return revive(JSON.parse(decrypt(this.deps.encryptionKey, existing.result)) as StoredResult, source);
  }

  async complete(clientId: string, key: string, result: { data?: Record<string, unknown> | null; errors?: readonly GraphQLError[] }) {
    const stored: StoredResult = {
      data: result.data,
      errors: result.errors?.map((error) => ({
        message: error.message,
        locations: error.locations,
        path: error.path,
        extensions: error.extensions as ApiErrorExtensions,
      })),
    };
    await this.deps.prisma.idempotencyRecord.update({
      where: { clientId_key: { clientId, key } },
      data: { state: "COMPLETED", result: encrypt(this.deps.encryptionKey, JSON.stringify(stored)) },
    });
  }

  /** Forgets a claim whose request was refused before it acted, so the caller can correct it and retry with the same key. */
  async release(clientId: string, key: string) {
    await this.deps.prisma.idempotencyRecord.deleteMany({ where: { clientId, key, state: "IN_PROGRESS" } });
  }
}

/**
 * The stored result as it was first answered. Locations are points in the document, which is the
 * same text as the first request's (its hash matched), so they are rebuilt as positions in it.
 */
function revive(stored: StoredResult, source?: Source): ReplayedResult {
  return {
    data: stored.data,
    errors: stored.errors?.map(
      (error) =>
        new ApiError(error.message, {
          path: error.path,
          extensions: error.extensions,
          ...(source && error.locations ? { source, positions: error.locations.map((location) => positionOf(source.body, location)) } : {}),
        }),
    ),
  };
}

function positionOf(text: string, { line, column }: SourceLocation): number {
  let offset = 0;
  for (let current = 1; current < line; current++) offset = text.indexOf("\n", offset) + 1;
  return offset + column - 1;
}
