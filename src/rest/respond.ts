import { GraphQLError } from "graphql";
import { AppError } from "../errors.js";
import { appErrorOf } from "../graphql/errors.js";
import type { Logger } from "../logger.js";
import type { ErrorOverride } from "./route.js";

export type RestError = { status: number; body: Record<string, string>; retryAfter?: number };

/**
 * The one place errors become REST responses: an AppError gives its status and `{error}` (plus
 * `details`), shaped by the route's overrides; a GraphQL request error (a variable of the wrong type
 * or missing) is a 400; anything else is logged and answered as a bare 500.
 */
export function restError(
  error: unknown,
  logger: Logger,
  overrides: Partial<Record<string, ErrorOverride>> = {},
): RestError {
  const appError = appErrorOf(error) ?? requestError(error);
  if (!appError) {
    logger.error({ err: (error as GraphQLError)?.originalError ?? error }, "unexpected error");
    return { status: 500, body: { error: "Internal server error" } };
  }
  const override = overrides[appError.code] ?? {};
  const body: Record<string, string> = { [override.field ?? "error"]: appError.message };
  if (appError.details) body.details = appError.details;
  return { status: override.status ?? appError.status, body, retryAfter: appError.retryAfter };
}

/** GraphQL's own request errors (no resolver path: a variable was missing or of the wrong type). */
function requestError(error: unknown): AppError | undefined {
  const candidate = error as GraphQLError;
  if (candidate instanceof GraphQLError && !candidate.path) {
    return new AppError("BAD_USER_INPUT", readable(candidate.message));
  }
  return undefined;
}

/**
 * `Variable "$input" got invalid value 5 at "input.email"; …` → `email: …`;
 * `Variable "$page" got invalid value "abc"; …` → `page: …`; a missing or null required value → `… is required`.
 */
function readable(message: string): string {
  const missingField = /Field "(\w+)" of required type "[^"]+" was not provided\.$/.exec(message);
  if (missingField) return `${missingField[1]} is required`;
  const missing = /^Variable "\$(\w+)" of (?:required|non-null) type "[^"]+" (?:must not be null|was not provided)\.$/.exec(message);
  if (missing) return `${missing[1]} is required`;
  const invalid = /^Variable "\$(\w+)" got invalid value .*?(?: at "(?:\w+\.)?([\w.]+)")?; (.*)$/s.exec(message);
  if (!invalid) return message;
  const field = invalid[2] ?? invalid[1];
  return /^Expected non-nullable type "[^"]+" not to be null\.$/.test(invalid[3]) ? `${field} is required` : `${field}: ${invalid[3]}`;
}
