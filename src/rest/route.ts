import type { z } from "zod";
import type { ErrorCode } from "../errors.js";
import type { TadaDocumentNode } from "../graphql/typed.js";
import type { RouteDocs } from "./docs.js";

/** What a REST handler sees of the HTTP request. */
export type RestInput = {
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: Record<string, unknown>;
};

/** How one documented error leaves the REST surface, where the contract differs from the default. */
export type ErrorOverride = { status?: number; field?: "error" | "message" };

/**
 * The variables a route passes: every variable of its operation by name (a required one must be
 * there), and the fields of an input object by name. The values come from the request as they are:
 * GraphQL checks them, and its refusals become the contract's 400s.
 */
export type RequestVariables<Variables> = {
  [Name in keyof Variables]: unknown extends Variables[Name]
    ? unknown
    : NonNullable<Variables[Name]> extends readonly unknown[] | string | number | boolean
    ? unknown
    : { [Field in keyof NonNullable<Variables[Name]>]: unknown };
};

/**
 * One /v1 path, declared: the GraphQL operation it runs (typed from the schema), how the request
 * becomes its variables, and how its result becomes the contract's body. No business logic lives here.
 */
export type Route<Data = unknown, Variables = Record<string, unknown>> = {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  path: string;
  operation: TadaDocumentNode<Data, Variables>;
  variables?: (input: RestInput) => RequestVariables<NoInfer<Variables>>;
  result: (data: NoInfer<Data>) => unknown;
  status?: number;
  errors?: Partial<Record<ErrorCode, ErrorOverride>>;
  /**
   * Its entry in the OpenAPI document, and the request it takes: a body is an object, and a field
   * its query or body does not document is refused (src/rest/request-fields.ts).
   */
  docs: RouteDocs & { body?: z.ZodObject };
};

/**
 * A documented endpoint: a REST route, or another /v1 path (the provider webhooks) declared in the
 * same terms. `operation`: the GraphQL operation a route runs, whose needed permissions (SPEC §13)
 * the document lists and whose name is its `operationId`; an endpoint that runs none gives its `operationId`.
 */
export type DocumentedEndpoint = Pick<Route, "method" | "path" | "status" | "errors"> & { docs: RouteDocs } &
  ({ operation: Route["operation"]; operationId?: never } | { operation?: never; operationId: string });

/**
 * Declares a route, checking its variables and result against its operation's types. The table then
 * holds it as a plain `Route`: the router only ever hands an operation's data to that route's `result`.
 */
export function route<Data, Variables>(definition: Route<Data, Variables>): Route {
  return definition as unknown as Route;
}

/**
 * A lookup's value in a route's data. Lookup fields are nullable in the schema but answer NOT_FOUND
 * instead of null, so data without an error always holds what the operation asked for.
 */
export function found<T>(value: T | null | undefined): T {
  if (value === null || value === undefined) throw new Error("A lookup answered null without an error");
  return value;
}

/** Query strings arrive as text: integers are passed on as numbers, anything else as given (then refused by GraphQL). */
export function integer(value: unknown): unknown {
  if (value === undefined) return undefined;
  return typeof value === "string" && /^-?\d{1,9}$/.test(value) ? Number(value) : value;
}

/**
 * A code the contract accepts in any case (a currency or network in a path, query or body), in the
 * upper case of the GraphQL enum; anything else as given (then refused by GraphQL naming the field
 * and the enum's values).
 */
export function code(value: unknown): unknown {
  return typeof value === "string" ? value.trim().toUpperCase() : value;
}

/**
 * `metadata[key]=value` query parameters (the query parser leaves the brackets in the names) as one
 * object `{key: value}` for the operation. Any other form (a bare `metadata=…`, `metadata[key` without
 * its bracket) is passed on as the name it was sent under, and a repeated key as its list, for the
 * service to refuse naming it.
 */
export function bracketed(query: Record<string, unknown>, name: string): unknown {
  const prefix = `${name}[`;
  const names = Object.keys(query).filter((key) => key === name || key.startsWith(prefix));
  if (!names.length) return undefined;
  const malformed = names.find((key) => !key.startsWith(prefix) || !key.endsWith("]"));
  if (malformed !== undefined) return malformed;
  return Object.fromEntries(names.map((key) => [key.slice(prefix.length, -1), query[key]]));
}
