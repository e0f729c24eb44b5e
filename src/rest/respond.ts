import type { ServerResponse } from "node:http";
import { isEnumType, type ExecutionResult, type GraphQLError } from "graphql";
import { ERROR_CODES } from "../errors.js";
import { codeOf } from "../graphql/errors.js";
import { schema } from "../gateway/schema.js";
import type { CallerFieldOf } from "./caller-fields.js";
import type { ErrorOverride } from "./route.js";

export type RestError = { status: number; body: Record<string, unknown> };

/**
 * The one place errors become REST responses. Every error reaching here went through the pipeline's
 * mapping (`maskError`): its code gives the status and its message the `{error}` (plus `details`),
 * shaped by the route's overrides where the contract differs; `code`, `param` and `requestId` follow.
 * On a route, the field at fault (the error's `param`, or the field its message starts with) is named
 * as the caller wrote it, in the message and in `param` (`first` is the query's `limit`).
 */
export function restError(error: GraphQLError, overrides: Partial<Record<string, ErrorOverride>> = {}, callerFieldOf?: CallerFieldOf): RestError {
  const code = codeOf(error);
  const override = overrides[code] ?? {};
  const text = code === "BAD_USER_INPUT" ? readable(error.message) : code === "INTERNAL" ? "Internal server error" : error.message;
  const { details, requestId, param } = error.extensions ?? {};
  const named = callerFieldOf ? inCallerTerms(text, typeof param === "string" ? param : undefined, callerFieldOf) : { message: text, field: param };
  // Only a 400 is worded around its field; another refusal (a 409 on a taken externalId) keeps its message and names the field in `param`.
  const { message, field } = code === "BAD_USER_INPUT" ? named : { message: text, field: named.field };
  const body: Record<string, unknown> = { [override.field ?? "error"]: message };
  if (typeof details === "string" || (typeof details === "object" && details !== null)) body.details = details;
  // Beside the contract's fields: a machine-readable code, the field at fault, and the id to quote to support.
  body.code = code;
  if (typeof field === "string") body.param = field;
  if (typeof requestId === "string") body.requestId = requestId;
  return { status: override.status ?? ERROR_CODES[code], body };
}

/** The field a message starts with: `email: …`, `limit must be …`, `userId is required`. */
const LEADING_FIELD = /^(\w+(?:\.\w+|\[\d+\])*)(?=: | must | is )/;

/** A field refused as unknown, named at the end of the message (`Received unknown parameter: bankAccount.nope`). */
const UNKNOWN_FIELD = /^(Received unknown parameter: )(\w+(?:\.\w+|\[\d+\])*)$/;

/** A message and its field, renamed from the operation's names to the caller's. */
function inCallerTerms(text: string, param: string | undefined, callerFieldOf: CallerFieldOf): { message: string; field?: string } {
  const unknown = UNKNOWN_FIELD.exec(text);
  if (unknown) {
    const field = callerFieldOf(unknown[2])?.param ?? unknown[2];
    return { message: `${unknown[1]}${field}`, field };
  }
  const leading = LEADING_FIELD.exec(text)?.[1];
  const named = leading !== undefined ? callerFieldOf(leading) : undefined;
  if (named) return { message: `${named.param}${named.reason ?? text.slice(leading!.length)}`, field: named.param };
  const found = param !== undefined ? callerFieldOf(param) : undefined;
  if (!found) return { message: text, field: param };
  return { message: `${found.param}${found.reason ?? `: ${text}`}`, field: found.param };
}

/** Headers the pipeline attached to a result or its errors (Retry-After, Idempotent-Replayed). */
export function setPipelineHeaders(res: ServerResponse, result: ExecutionResult) {
  const headerSets = [result.extensions?.http, ...(result.errors ?? []).map((error) => error.extensions?.http)] as
    ({ headers?: Record<string, string> } | undefined)[];
  for (const set of headerSets) for (const [name, value] of Object.entries(set?.headers ?? {})) res.setHeader(name, value);
}

/**
 * `Variable "$input" got invalid value 5 at "input.email"; …` → `email: …`;
 * `Variable "$page" got invalid value "abc"; …` → `page: …`; a missing or null required value → `… is required`
 * (`bankAccount.routing is required`);
 * a value outside an enum → `currency must be one of NGN, USD, …`; a field its input type does not have →
 * `Received unknown parameter: bankAccount.nope`.
 */
function readable(message: string): string {
  const missingField = /^Variable "\$\w+" got invalid value .*?(?: at "(?:\w+\.)?([\w.[\]]+)")?; Field "(\w+)" of required type "[^"]+" was not provided\.$/s.exec(message);
  if (missingField) return `${missingField[1] ? `${missingField[1]}.` : ""}${missingField[2]} is required`;
  const missing = /^Variable "\$(\w+)" of (?:required|non-null) type "[^"]+" (?:must not be null|was not provided)\.$/.exec(message);
  if (missing) return `${missing[1]} is required`;
  const invalid = /^Variable "\$(\w+)" got invalid value .*?(?: at "(?:\w+\.)?([\w.[\]]+)")?; (.*)$/s.exec(message);
  if (!invalid) return message;
  const field = invalid[2] ?? invalid[1];
  const unknownField = /^Field "(\w+)" is not defined by type "\w+"\./.exec(invalid[3])?.[1];
  if (unknownField) return `Received unknown parameter: ${field}.${unknownField}`;
  const enumValues = enumValuesIn(invalid[3]);
  if (enumValues) return `${field} must be one of ${enumValues.join(", ")}`;
  const scalar = /^(\w+) cannot represent/.exec(invalid[3])?.[1];
  if (scalar && scalar in SCALAR_NAMES) return `${field} must be ${SCALAR_NAMES[scalar as keyof typeof SCALAR_NAMES]}`;
  return /^Expected non-nullable type "[^"]+" not to be null\.$/.test(invalid[3]) ? `${field} is required` : `${field}: ${invalid[3]}`;
}

/** GraphQL's built-in scalars as a REST caller knows them. */
const SCALAR_NAMES = { Int: "an integer", Float: "a number", String: "a string", ID: "a string", Boolean: "a boolean" } as const;

/** `Value "x" does not exist in "Currency" enum.` or `Enum "Currency" cannot represent non-string value: 5.` → that enum's values. */
function enumValuesIn(reason: string): string[] | undefined {
  const name = /^(?:Value .* does not exist in|Enum) "(\w+)"(?: enum\.| cannot represent)/s.exec(reason)?.[1];
  const type = name ? schema.getType(name) : undefined;
  return isEnumType(type) ? type.getValues().map((value) => value.name) : undefined;
}
