import { createHash } from "node:crypto";
import type { NextFunction, Request, Response } from "express";
import { parse, getOperationAST } from "graphql";
import type { PrismaClient } from "../generated/prisma/client.js";
import { isUniqueViolation } from "../db/errors.js";
import { authenticateRequest } from "./request-auth.js";
import { AppError } from "../errors.js";
import type { Logger } from "../logger.js";
import type { Services } from "../services.js";
import { sendError } from "./errors.js";

const RETENTION_MS = 24 * 60 * 60_000;
const MAX_KEY_LENGTH = 255;
/** Error codes of a request refused before it ran: such answers are not kept, so the key can be reused. */
const REFUSALS = new Set(["BAD_USER_INPUT", "NOT_FOUND", "UNAUTHENTICATED", "FORBIDDEN", "RATE_LIMITED"]);

type StoredResponse = { contentType: string; body: string };

/** The full path: this middleware is mounted on /v1 and /graphql, so `req.path` alone is relative to those. */
const pathOf = (req: Request) => req.originalUrl.split("?")[0];

/** Only mutating requests take part: REST writes, and GraphQL documents whose operation is a mutation. */
function isMutating(req: Request): boolean {
  if (pathOf(req) === "/graphql") {
    if (req.method !== "POST" || typeof req.body?.query !== "string") return false;
    try {
      return getOperationAST(parse(req.body.query), req.body.operationName)?.operation === "mutation";
    } catch {
      return false;
    }
  }
  return req.method === "POST" || req.method === "DELETE" || req.method === "PUT" || req.method === "PATCH";
}

function requestHash(req: Request): string {
  return createHash("sha256")
    .update(JSON.stringify([req.method, req.originalUrl, req.body ?? null]))
    .digest("hex");
}

/** Whether a finished response is a refusal that must not be remembered. */
function wasRefused(status: number, body: string): boolean {
  if (status >= 400 && status < 500) return true;
  if (status !== 200 || !body.includes('"errors"')) return false;
  try {
    const errors = (JSON.parse(body) as { errors?: { extensions?: { code?: string } }[] }).errors ?? [];
    return errors.length > 0 && errors.every((e) => REFUSALS.has(e.extensions?.code ?? ""));
  } catch {
    return false;
  }
}

/**
 * Idempotency-Key for every mutating request, on both surfaces. The first request with a key runs
 * and its response is kept 24 hours; the same key and request replays it (Idempotent-Replayed:
 * true); the same key with another request is a 422; while the first is still running, a 409.
 */
export function idempotency(deps: { prisma: PrismaClient; services: Services; logger: Logger }) {
  const { prisma } = deps;
  let lastSweep = 0;

  async function claim(clientId: string, key: string, hash: string) {
    const now = new Date();
    // Expired records go at most once a minute per instance; the key's own expired record goes now.
    const sweepAll = now.getTime() - lastSweep > 60_000;
    if (sweepAll) lastSweep = now.getTime();
    await prisma.idempotencyRecord.deleteMany({
      where: sweepAll ? { expiresAt: { lt: now } } : { clientId, key, expiresAt: { lt: now } },
    });
    try {
      await prisma.idempotencyRecord.create({
        data: { clientId, key, requestHash: hash, state: "IN_PROGRESS", expiresAt: new Date(now.getTime() + RETENTION_MS) },
      });
      return null;
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      return prisma.idempotencyRecord.findUnique({ where: { clientId_key: { clientId, key } } });
    }
  }

  return async (req: Request, res: Response, next: NextFunction) => {
    const key = req.get("idempotency-key");
    if (key === undefined || !isMutating(req)) return next();
    if (key.length === 0 || key.length > MAX_KEY_LENGTH) {
      return sendError(res, new AppError("BAD_USER_INPUT", `Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} characters`));
    }
    const clientId = await authenticateRequest(req, deps.services).then(
      (auth) => auth.clientId,
      () => undefined,
    );
    if (!clientId) return next(); // unauthenticated: the route itself answers 401
    const hash = requestHash(req);
    const existing = await claim(clientId, key, hash);
    if (existing) {
      if (existing.requestHash !== hash) {
        return sendError(res, new AppError("IDEMPOTENCY_MISMATCH", "This Idempotency-Key was used with a different request"));
      }
      if (existing.state !== "COMPLETED" || existing.responseBody === null) {
        return sendError(res, new AppError("CONFLICT", "A request with this Idempotency-Key is still in progress"));
      }
      const stored = JSON.parse(existing.responseBody) as StoredResponse;
      res.status(existing.responseStatus ?? 200).setHeader("Idempotent-Replayed", "true").type(stored.contentType).send(stored.body);
      return;
    }
    captureResponse(res, async (status, body) => {
      try {
        if (wasRefused(status, body)) {
          await prisma.idempotencyRecord.delete({ where: { clientId_key: { clientId, key } } });
        } else {
          const stored: StoredResponse = { contentType: String(res.getHeader("content-type") ?? "application/json"), body };
          await prisma.idempotencyRecord.update({
            where: { clientId_key: { clientId, key } },
            data: { state: "COMPLETED", responseStatus: status, responseBody: JSON.stringify(stored) },
          });
        }
      } catch (err) {
        deps.logger.error({ err }, "could not record an idempotent response");
      }
    });
    next();
  };
}

/**
 * Collects what the response writes and, before the last bytes go out, lets `beforeEnd` record it:
 * a client that retries the moment it has the answer already finds the record completed.
 */
function captureResponse(res: Response, beforeEnd: (status: number, body: string) => Promise<void>) {
  const chunks: Buffer[] = [];
  const keep = (chunk: unknown, encoding?: unknown) => {
    if (chunk === undefined || chunk === null || typeof chunk === "function") return;
    chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string, typeof encoding === "string" ? (encoding as BufferEncoding) : "utf8"));
  };
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    keep(chunk, rest[0]);
    return write(chunk, ...rest);
  }) as Response["write"];
  res.end = ((chunk?: unknown, ...rest: unknown[]) => {
    keep(chunk, rest[0]);
    void beforeEnd(res.statusCode, Buffer.concat(chunks).toString("utf8")).finally(() => end(chunk, ...rest));
    return res;
  }) as Response["end"];
}
