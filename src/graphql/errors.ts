import { PothosValidationError } from "@pothos/core";
import { GraphQLError } from "graphql";
import { AppError, ERROR_CODES, type ErrorCode, type ErrorDetails } from "../errors.js";
import { isDatabaseUnavailable, isInvalidTextError } from "../db/errors.js";
import type { Logger } from "../logger.js";

/** An error already shaped for callers: masking it again keeps it as it is. */
export class ApiError extends GraphQLError {}

export type ApiErrorExtensions = { code: ErrorCode; details?: ErrorDetails; param?: string; requestId?: string };

/** Finds the AppError behind a GraphQL error, however deeply it was wrapped. */
export function appErrorOf(error: unknown): AppError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current; depth++) {
    if (current instanceof AppError) return current;
    current = (current as { originalError?: unknown }).originalError;
  }
  return undefined;
}

/**
 * The one place errors are shaped, for every transport (REST reads the same extensions):
 * an AppError keeps its message and gets `extensions.code` (and `details`, `param`); GraphQL's own
 * request errors (parse, validation, variables: no resolver path) are BAD_USER_INPUT; text the
 * database cannot store, and connection arguments Pothos refuses (a negative `first`, a malformed
 * cursor), are BAD_USER_INPUT; an unreachable database is SERVICE_UNAVAILABLE (503, Retry-After);
 * anything else is logged and masked as INTERNAL.
 * Errors without a path refused the whole request, so over HTTP they carry its status
 * (`extensions.http`, which yoga turns into the status and headers and never shows). With the
 * request's id (`requestId`), the error quotes it and so does the log line of an unexpected one.
 */
export function maskError(error: unknown, logger: Logger, requestId?: string): GraphQLError {
  if (error instanceof ApiError) return requestId ? forRequest(error, requestId) : error;
  const located = error instanceof GraphQLError ? error : undefined;
  const appError = appErrorOf(error) ?? knownFailureOf(error);
  if (appError) return toApiError(appError, located, requestId);
  // GraphQL's own request errors (parse, validation, variables; their cause, if any, is a GraphQL
  // error too). An error without a path that wraps anything else (a database failure during a
  // stream, say) is unexpected, and its message must not reach the caller.
  if (located && !located.path && (!located.originalError || located.originalError instanceof GraphQLError)) {
    return toApiError(new AppError("BAD_USER_INPUT", located.message, { param: variableOf(located.message) }), located, requestId);
  }
  logger.error({ err: located?.originalError ?? error, requestId }, "unexpected error");
  return toApiError(new AppError("INTERNAL", "Unexpected error"), located, requestId);
}

/** Seconds a caller is asked to wait while the database is unreachable. */
const UNAVAILABLE_RETRY_AFTER_S = 5;

/** Failures that are not faults of the code: unstorable text (the caller's), an unreachable database (for now). */
function knownFailureOf(error: unknown): AppError | undefined {
  if (isInvalidTextError(error)) return new AppError("BAD_USER_INPUT", "Text contains characters that cannot be stored");
  if (isDatabaseUnavailable(error)) {
    return new AppError("SERVICE_UNAVAILABLE", "The service is temporarily unavailable; retry shortly", { retryAfter: UNAVAILABLE_RETRY_AFTER_S });
  }
  const cause = (error as { originalError?: unknown } | undefined)?.originalError ?? error;
  if (cause instanceof PothosValidationError) return new AppError("BAD_USER_INPUT", cause.message);
  return undefined;
}

export function toApiError(appError: AppError, located?: GraphQLError, requestId?: string): ApiError {
  const extensions: ApiErrorExtensions & { http?: { status?: number; headers?: Record<string, string> } } = { code: appError.code };
  if (appError.details) extensions.details = appError.details;
  if (appError.param) extensions.param = appError.param;
  if (requestId) extensions.requestId = requestId;
  const headers = appError.retryAfter ? { "Retry-After": String(appError.retryAfter) } : undefined;
  if (!located?.path) {
    // yoga's own HTTP refusals (405 for a mutation over GET, with Allow) keep their status and headers.
    const own = located?.extensions?.http as { status: number; headers?: Record<string, string> } | undefined;
    extensions.http = own?.status ? own : { status: appError.status, headers };
  } else if (headers) {
    // A field refused for its rate (OTP requests per address) still tells when to retry, without failing the response.
    extensions.http = { headers };
  }
  return new ApiError(appError.message, { nodes: located?.nodes, path: located?.path, extensions });
}

/**
 * A shaped error quoting this request's id. Validation results are cached per document, so the
 * errors of a document that failed before are the ones shaped then, with that request's id.
 */
export function forRequest(error: GraphQLError, requestId: string): GraphQLError {
  if (!(error instanceof ApiError) || error.extensions.requestId === requestId) return error;
  return new ApiError(error.message, { nodes: error.nodes, path: error.path, extensions: { ...error.extensions, requestId } });
}

/** Shaped for a request already: this one, or the first of a replayed answer, which keeps its id. */
const quotesARequest = (error: GraphQLError) => error instanceof ApiError && typeof error.extensions.requestId === "string";

/** A result whose errors are all shaped and quote a request's id: this one's unless they already did. */
export function shapedResult<R extends { errors?: readonly GraphQLError[] }>(result: R, logger: Logger, requestId: string): R {
  if (!result.errors?.length) return result;
  return { ...result, errors: result.errors.map((error) => (quotesARequest(error) ? error : maskError(error, logger, requestId))) };
}

/** The code of an error that went through `maskError` (or is about to). */
export function codeOf(error: GraphQLError): ErrorCode {
  const code = error.extensions?.code;
  return typeof code === "string" && code in ERROR_CODES ? (code as ErrorCode) : (appErrorOf(error)?.code ?? "INTERNAL");
}

/** `Variable "$input" got invalid value … at "input.email"` → `input.email`; `Variable "$page" …` → `page`. */
function variableOf(message: string): string | undefined {
  const match = /^Variable "\$(\w+)"[^]*?(?: at "([\w.]+)")?;/.exec(message) ?? /^Variable "\$(\w+)"/.exec(message);
  return match ? (match[2] ?? match[1]) : undefined;
}
