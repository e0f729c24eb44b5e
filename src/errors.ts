/**
 * The one error model of the product. Services throw AppError; the GraphQL layer turns it into
 * `extensions.code`, the REST layer into the contract's status and body (src/rest/respond.ts).
 * Anything that is not an AppError is unexpected: logged, and masked as INTERNAL.
 */
export const ERROR_CODES = {
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  /** A sandbox helper or simulation asked for in live mode (SPEC §15). */
  TEST_MODE_ONLY: 403,
  /** A test-mode credential on a server whose test mode is off (SANDBOX=false). */
  TEST_MODE_DISABLED: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  BAD_USER_INPUT: 400,
  CONFLICT: 409,
  IDEMPOTENCY_MISMATCH: 422,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  INSUFFICIENT_FUNDS: 400,
  RATE_LIMITED: 429,
  PROVIDER_ERROR: 500,
  INTERNAL: 500,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export type ErrorDetails = string | Record<string, string>;

export class AppError extends Error {
  readonly code: ErrorCode;
  /** Text, or a small object naming what the error is about (a 409's existing record: `{id}`). */
  readonly details?: ErrorDetails;
  /** The input field at fault (`input.email`, `userId`), when there is one. */
  readonly param?: string;
  /** Seconds, for RATE_LIMITED. */
  readonly retryAfter?: number;

  constructor(code: ErrorCode, message: string, options: { details?: ErrorDetails; param?: string; retryAfter?: number } = {}) {
    super(message);
    this.name = "AppError";
    this.code = code;
    this.details = options.details;
    this.param = options.param;
    this.retryAfter = options.retryAfter;
  }

  get status(): number {
    return ERROR_CODES[this.code];
  }
}

export const notFound = (what: string) => new AppError("NOT_FOUND", `${what} not found`);
export const badInput = (message: string) => new AppError("BAD_USER_INPUT", message);
export const unauthenticated = (message = "Authentication required") => new AppError("UNAUTHENTICATED", message);
