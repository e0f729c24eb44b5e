import type { ErrorCode } from "../errors.js";
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
 * One /v1 path, declared: the GraphQL operation it runs, how the request becomes its variables,
 * and how the result becomes the contract's body. No business logic lives here.
 */
export type Route = {
  method: "GET" | "POST" | "DELETE";
  path: string;
  operation: string;
  variables?: (input: RestInput) => Record<string, unknown>;
  /** GraphQL data is untyped here. */
  result: (data: any) => unknown;
  status?: number;
  errors?: Partial<Record<ErrorCode, ErrorOverride>>;
  /** Its entry in the OpenAPI document. */
  docs: RouteDocs;
};

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

/** REST speaks JSON numbers for money (the contract); GraphQL keeps the exact decimal string. */
export function withNumbers<T extends Record<string, unknown>>(record: T, fields: readonly string[]): T {
  const copy: Record<string, unknown> = { ...record };
  for (const field of fields) {
    if (typeof copy[field] === "string") copy[field] = Number(copy[field]);
  }
  return copy as T;
}
