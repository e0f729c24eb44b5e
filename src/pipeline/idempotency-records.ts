import type { GraphQLError, Source, SourceLocation } from "graphql";
import type { PrismaClient } from "../generated/prisma/client.js";
import { runAsUnit } from "../db/unit-of-work.js";
import { AppError } from "../errors.js";
import { ApiError, type ApiErrorExtensions } from "../graphql/errors.js";
import { decrypt, encrypt } from "../providers/encryption.js";

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
type ExecutedResult = { data?: Record<string, unknown> | null; errors?: readonly GraphQLError[] };

/**
 * One keyed request: who sent it (its client, and the credential, an API key or a session, it came
 * with), under which key, and what it asked (its hash; its text, for replayed error locations).
 */
export type KeyedRequest = { clientId: string; credentialId: string; key: string; requestHash: string; source?: Source };

const TRY_LOCK = "SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS locked";
const WROTE = "SELECT pg_current_xact_id_if_assigned() IS NOT NULL AS wrote";

/**
 * Idempotency records, per client and key, kept 24 hours (by default). A record replays only to the
 * credential that made it: a kept answer can hold a secret shown once (a new API key), and the checks
 * of what a credential may do run inside the operation, which a replay skips; so another credential
 * of the client under the same key is refused (422), never answered and never run a second time. A keyed request runs as one unit of work
 * (src/db/unit-of-work.ts): its effects and its record, whose result is stored encrypted (results can
 * hold secrets shown once: a new API key, a card number), commit in one transaction. A crash at any
 * point before that commit leaves nothing behind, so the retry runs the request exactly once; after
 * it, the retry replays. While a request runs, its transaction holds an advisory lock on the key,
 * which ends with the transaction (or with the connection of a process that died): a 409 means the
 * first request is really running.
 */
export class IdempotencyRecords {
  /** `retentionMs`: how long a key and its answer are kept (RETENTION_IDEMPOTENCY_HOURS; the retention job deletes them after). */
  constructor(private readonly deps: { prisma: PrismaClient; encryptionKey: Buffer; retentionMs: number }) {}

  /**
   * Runs `execute` once for this key and keeps its result, unless the request was refused before it
   * acted: `execute` says when its root field refused, and the transaction tells whether anything
   * was written. Such a request is not kept, so it can be corrected and retried under the same key.
   * Returns the first request's result to replay instead when there is one; throws 422 when the key
   * was used for another request, 409 while the first is still running.
   */
  async runOnce<T>(
    request: KeyedRequest,
    execute: () => Promise<{ answer: T; result: ExecutedResult; refused: boolean }>,
  ): Promise<{ answer: T } | { replayed: ReplayedResult }> {
    const stored = await this.replayOf(request);
    if (stored) return { replayed: stored };
    return runAsUnit(this.deps.prisma, async (sql) => {
      const [{ locked }] = await sql.query<{ locked: boolean }>("idempotency_try_lock", TRY_LOCK, [`${request.clientId}:${request.key}`]);
      if (!locked) throw new AppError("CONFLICT", "A request with this Idempotency-Key is still in progress");
      // The record may have been written since the look-up above, by a request that has ended since.
      const written = await this.replayOf(request);
      if (written) return { replayed: written };
      const { answer, result, refused } = await execute();
      // Nothing before `execute` writes, so a transaction id means the request wrote (or locked rows for writing).
      const [{ wrote }] = await sql.query<{ wrote: boolean }>("idempotency_wrote", WROTE, []);
      if (!refused || wrote) await this.store(request, result);
      return { answer };
    });
  }

  private async replayOf({ clientId, credentialId, key, requestHash, source }: KeyedRequest): Promise<ReplayedResult | null> {
    const existing = await this.deps.prisma.idempotencyRecord.findUnique({ where: { clientId_key: { clientId, key } } });
    if (!existing || existing.expiresAt <= new Date()) return null;
    // Records kept before credentials were recorded have none: they replay to no one.
    if (existing.credentialId !== credentialId) {
      throw new AppError("IDEMPOTENCY_MISMATCH", "This Idempotency-Key was used by another credential of this client", { param: "Idempotency-Key" });
    }
    if (existing.requestHash !== requestHash) {
      throw new AppError("IDEMPOTENCY_MISMATCH", "This Idempotency-Key was used with a different request", { param: "Idempotency-Key" });
    }
    if (existing.result === null) {
      // Only an earlier version wrote a record before its request ran (state IN_PROGRESS); it may or may not have acted.
      throw new AppError("CONFLICT", "The request with this Idempotency-Key was left unfinished by an earlier version; its outcome is unknown");
    }
    return revive(JSON.parse(decrypt(this.deps.encryptionKey, existing.result)) as StoredResult, source);
  }

  private async store({ clientId, credentialId, key, requestHash }: KeyedRequest, result: ExecutedResult) {
    const stored: StoredResult = {
      data: result.data,
      errors: result.errors?.map((error) => ({
        message: error.message,
        locations: error.locations,
        path: error.path,
        extensions: error.extensions as ApiErrorExtensions,
      })),
    };
    const record = { credentialId, requestHash, state: "COMPLETED", result: encrypt(this.deps.encryptionKey, JSON.stringify(stored)), createdAt: new Date(), expiresAt: new Date(Date.now() + this.deps.retentionMs) };
    // An expired record of the key may still be there (the retention job deletes it later): replaced.
    await this.deps.prisma.idempotencyRecord.upsert({ where: { clientId_key: { clientId, key } }, create: { clientId, key, ...record }, update: record });
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
