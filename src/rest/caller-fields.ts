import { z } from "zod";
import type { RestInput, Route } from "./route.js";

/** A field of a REST request as the caller wrote it: a path parameter, a query parameter or a body field. */
type CallerField = { in: "path" | "query" | "body"; name: string };

/**
 * A refusal's field as the caller wrote it (`limit`, `metadata.tier`, `permissions.user`), and, where
 * the operation's reason is in its own terms, the caller's (` must be one of read, write`, after the name).
 */
export type InCallerTerms = { param: string; reason?: string };

/** Names a field of the operation (`first`, `input.email`, `input.metadata.tier`, `email`) as the caller wrote it in this request. */
export type CallerFieldOf = (operationField: string) => InCallerTerms | undefined;

const MARK = "\u0000";
const MARKER = new RegExp(`^${MARK}(\\d+)${MARK}$`);

/**
 * Where each variable of a route's operation comes from in the request, traced once by running the
 * route's `variables` on a request whose every field holds a marker, and finding the markers in the
 * variables it builds (`first` ← query `limit`, `input.email` ← body `email`, `id` ← path `userId`).
 * The route's helpers pass a text they cannot read on as it is (upper-cased by `code`), so a marker
 * survives them. A field of an input object is also found by its own name (`email`), the name a
 * service's refusal uses; a name the caller wrote or the route documents (a service naming `userId`
 * for the path's `userId`, `metadata` for the `metadata[key]` parameters) is its own.
 *
 * Below a caller's field, the operation's path is the caller's where the value has that shape
 * (`bankAccount.routing`, passed on as it is). Where the route reshaped it (the `permissions` map
 * becomes a list of grants), or the value is not of its kind at all, the field's documented schema
 * says what it refuses, in the caller's terms.
 */
export function callerFieldsOf(route: Route): (input: RestInput) => CallerFieldOf {
  const fields: CallerField[] = [];
  const marked = (field: CallerField) => `${MARK}${fields.push(field) - 1}${MARK}`;
  const requestOf = (place: "query" | "body") =>
    new Proxy({} as Record<string, unknown>, { get: (_target, name) => (typeof name === "string" ? marked({ in: place, name }) : undefined) });
  const params = Object.fromEntries([...route.path.matchAll(/:(\w+)/g)].map(([, name]) => [name, marked({ in: "path", name })]));
  const variables = route.variables?.({ params, query: requestOf("query"), body: requestOf("body") }) ?? {};

  const byPath = new Map<string, CallerField>();
  const visit = (value: unknown, path: string) => {
    const marker = typeof value === "string" ? MARKER.exec(value) : null;
    if (marker) return void byPath.set(path, fields[Number(marker[1])]);
    if (Array.isArray(value)) return value.forEach((item, index) => visit(item, `${path}[${index}]`));
    if (value && typeof value === "object") for (const [key, item] of Object.entries(value)) visit(item, path ? `${path}.${key}` : key);
  };
  visit(variables, "");
  for (const [path, field] of [...byPath]) {
    // A list the route made of one field (`types: [query.type]`) is that field too.
    const list = /^(.*)\[\d+\]$/.exec(path)?.[1];
    for (const alias of [path, list].filter((name) => name !== undefined)) {
      const ownName = alias.replace(/^\w+\./, "");
      for (const name of [alias, ownName]) if (!byPath.has(name)) byPath.set(name, field);
    }
  }
  // Fields read, or documented, but not passed on as they are (`metadata[…]` parameters, gathered by `bracketed`) name themselves.
  const { query, body } = route.docs;
  const documented: CallerField[] = [
    ...Object.keys(query?.shape ?? {}).map((name) => ({ in: "query" as const, name })),
    ...Object.keys(body?.shape ?? {}).map((name) => ({ in: "body" as const, name })),
  ];
  const read = new Map([...documented, ...fields].map((field) => [field.name, field]));

  const traced = (operationField: string) => {
    // The field itself, or the nearest enclosing one that came from the caller.
    for (let path = operationField; path; path = enclosing(path)) {
      const field = byPath.get(path);
      if (field) return { field, below: operationField.slice(path.length) };
    }
    const own = /^\w+/.exec(operationField)?.[0] ?? "";
    const field = read.get(own);
    return field && { field, below: operationField.slice(own.length) };
  };

  return (input) => (operationField) => {
    const found = traced(operationField);
    if (!found) return undefined;
    const { field, below } = found;
    if (!below) return { param: field.name };
    const value = placeOf(input, field.in)[field.name];
    const schema = documentedSchema(route, field);
    const refusal = schema?.safeParse(value).error?.issues[0];
    const asWritten = valueAt(value, enclosing(below)) !== undefined;
    const notOfItsKind = refusal?.code === "invalid_type" && refusal.path.length === 0;
    if (refusal && (!asWritten || notOfItsKind)) return inTermsOf(field.name, refusal, schema!);
    return { param: asWritten ? `${field.name}${below}` : field.name };
  };
}

/** `input.permissions[0]` of `input.permissions[0].resource`; "" above the top. */
const enclosing = (path: string) => /^(.*?)(?:\.\w+|\[\d+\])$/.exec(path)?.[1] ?? "";

const placeOf = (input: RestInput, place: CallerField["in"]): Record<string, unknown> =>
  place === "path" ? input.params : place === "query" ? input.query : input.body;

/** The value at `.a[0].b` below `value`, if the caller's value has that shape. */
function valueAt(value: unknown, below: string): unknown {
  let current = value;
  for (const [, key] of below.matchAll(/[.[](\w+)\]?/g)) {
    if (!current || typeof current !== "object" || !Object.hasOwn(current, key)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

function documentedSchema(route: Route, field: CallerField): z.ZodType | undefined {
  const { params, query, body } = route.docs;
  const schema = field.in === "path" ? params?.[field.name] : field.in === "query" ? query?.shape[field.name] : body?.shape[field.name];
  return schema instanceof z.ZodType ? schema : undefined;
}

/** A zod refusal of a caller's field, named and worded as the caller wrote it. */
function inTermsOf(name: string, issue: z.core.$ZodIssue, schema: z.ZodType): InCallerTerms {
  const path = [name, ...issue.path.map(String)];
  if (issue.code === "unrecognized_keys") return { param: [...path, issue.keys[0]].join("."), reason: ` is not one of ${keysOf(schema).join(", ")}` };
  if (issue.code === "invalid_value") return { param: path.join("."), reason: ` must be one of ${issue.values.join(", ")}` };
  return { param: path.join("."), reason: `: ${issue.message}` };
}

/** The keys an object or record schema takes, as its documentation lists them. */
function keysOf(schema: z.ZodType): string[] {
  type Shape = { propertyNames?: { enum?: unknown[] }; properties?: object; anyOf?: Shape[]; $ref?: string; $defs?: Record<string, Shape> };
  const root = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Shape;
  const shapes = [root];
  for (const named of shapes) {
    const shape = named.$ref ? root.$defs?.[named.$ref.split("/").pop()!] ?? {} : named;
    if (Array.isArray(shape.propertyNames?.enum)) return shape.propertyNames.enum.map(String);
    if (shape.properties) return Object.keys(shape.properties);
    shapes.push(...(shape.anyOf ?? []));
  }
  return [];
}
