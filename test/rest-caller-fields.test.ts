import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Route } from "../src/rest/route.js";
import { routes, sandboxRoutes } from "../src/rest/routes/index.js";
import { rest, userInput } from "./support/http.js";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";

let server: TestServer;
let tenant: Tenant;
beforeAll(async () => {
  server = await startServer();
  tenant = await newTenant(server);
});
afterAll(() => server?.stop());

type Json = {
  type?: string | string[]; enum?: unknown[]; format?: string; minimum?: number; maxLength?: number;
  properties?: Record<string, Json>; required?: string[]; anyOf?: Json[]; $ref?: string; $defs?: Record<string, Json>;
};
/** A documented schema as the OpenAPI document shows it, its named parts (`$ref`) in place. */
function jsonOf(schema: z.ZodType): Json {
  const root = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Json;
  const inline = (json: Json): Json => {
    const own = json.$ref ? root.$defs![json.$ref.split("/").pop()!] : json;
    return { ...own, anyOf: own.anyOf?.map(inline), properties: own.properties && Object.fromEntries(Object.entries(own.properties).map(([name, field]) => [name, inline(field)])) };
  };
  return inline(root);
}
const typesOf = (json: Json): string[] => [json.type ?? [], ...(json.anyOf ?? []).map(typesOf)].flat(2).filter((type) => type !== "null");

/** A value of the wrong kind for a documented parameter, as text (a path or query string); undefined when any text is valid. */
function badText(json: Json): string | undefined {
  const enumValues = json.enum ?? json.anyOf?.find((option) => option.enum)?.enum;
  if (enumValues) return "not-one-of-them";
  const types = typesOf(json);
  if (types.includes("integer") || types.includes("number")) return "not-a-number";
  if (json.format === "uuid" || json.format === "date-time") return "not-a-uuid";
  if (json.maxLength !== undefined) return "x".repeat(json.maxLength + 1);
  return undefined;
}

/** A JSON value of the wrong type for a documented body field. */
function badJson(json: Json): unknown {
  if (json.enum ?? json.anyOf?.some((option) => option.enum)) return "not-one-of-them";
  const types = typesOf(json);
  if (types.includes("string")) return 12345;
  if (types.includes("number") || types.includes("integer") || types.includes("boolean")) return "not-a-number";
  if (types.includes("array")) return { not: "a list" };
  if (types.includes("object")) return ["not", "an", "object"];
  return undefined;
}

/** A well-formed value for a documented parameter, as text. */
function goodText(json: Json | undefined): string {
  const enumValues = json?.enum ?? json?.anyOf?.find((option) => option.enum)?.enum;
  if (enumValues) return String(enumValues[0]);
  const types = json ? typesOf(json) : [];
  if (types.includes("integer") || types.includes("number")) return String(json?.minimum ?? 1);
  return types.includes("string") && json?.format !== "uuid" && !json?.maxLength ? "1" : crypto.randomUUID();
}

/** A path that reaches the route, with `bad` in one parameter and well-formed values in the others, with its required query parameters. */
function pathOf(route: Route, bad?: { in: "path" | "query"; name: string; value: string }): string {
  const path = route.path.replace(/:(\w+)/g, (_, name: string) => {
    if (bad?.in === "path" && name === bad.name) return encodeURIComponent(bad.value);
    const schema = route.docs.params?.[name];
    return goodText(typeof schema === "object" ? jsonOf(schema) : undefined);
  });
  const query = route.docs.query ? jsonOf(route.docs.query) : undefined;
  const parameters = new URLSearchParams(Object.fromEntries((query?.required ?? []).map((name) => [name, goodText(query?.properties?.[name])])));
  if (bad?.in === "query") parameters.set(bad.name, bad.value);
  return parameters.size ? `${path}?${parameters}` : path;
}

type Case = [label: string, route: Route, where: "path" | "query" | "body", name: string, request: { path: string; body?: unknown }];

/** One request per documented parameter of every route (path, query, body field), each with one bad value. */
function cases(): Case[] {
  const all: Case[] = [];
  for (const route of [...routes, ...sandboxRoutes]) {
    const label = (where: string, name: string) => `${route.method} ${route.path} ${where} ${name}`;
    const validBody = route.docs.example.body ?? (route.docs.body ? {} : undefined);
    for (const name of [...route.path.matchAll(/:(\w+)/g)].map((match) => match[1])) {
      const schema = route.docs.params?.[name];
      const value = typeof schema === "object" ? badText(jsonOf(schema)) : "not-a-uuid";
      if (value !== undefined) all.push([label("path", name), route, "path", name, { path: pathOf(route, { in: "path", name, value }), body: validBody }]);
    }
    for (const [name, schema] of Object.entries(route.docs.query?.shape ?? {})) {
      const value = badText(jsonOf(schema as z.ZodType));
      if (value !== undefined) all.push([label("query", name), route, "query", name, { path: pathOf(route, { in: "query", name, value }), body: validBody }]);
    }
    const body = route.docs.body ? jsonOf(route.docs.body) : undefined;
    for (const [name, field] of Object.entries(body?.properties ?? {})) {
      const value = badJson(field);
      if (value !== undefined) all.push([label("body", name), route, "body", name, { path: pathOf(route), body: { ...(validBody as object), [name]: value } }]);
    }
  }
  return all;
}

describe("a REST 400 names the caller's field, as written, in its message and in `param`", () => {
  const table = cases();

  it("covers path, query and body parameters of the table", () => {
    const places = new Set(table.map(([, , where]) => where));
    expect([...places].sort()).toEqual(["body", "path", "query"]);
  });

  it.each(table)("%s", async (_label, route, _where, name, request) => {
    const res = await rest(server, route.method, request.path, { headers: tenant.headers, body: request.body });
    // Some bad values are refused as absent resources (an id that is not a UUID is found nowhere): those name nothing.
    if (res.status !== 400) return expect([404, 409]).toContain(res.status);
    expect(res.body.param, JSON.stringify(res.body)).toMatch(new RegExp(`^${name}(?![\\w])`));
    expect(res.body.error ?? res.body.message, JSON.stringify(res.body)).toMatch(new RegExp(`^${res.body.param.replace(/[.[\]]/g, "\\$&")}(?![\\w])`));
  });
});

describe("the refusals a newcomer met name what they sent", () => {
  it.each<[label: string, method: string, path: string, body: unknown, param: string, message: string]>([
    ["an empty limit", "GET", "/v1/audit-log?after=&limit=", undefined, "limit", "limit must be an integer"],
    ["an unknown event type", "GET", "/v1/events?type=deposit.done", undefined, "type", "type: unknown event type deposit.done"],
    ["an unknown resource", "POST", "/v1/api-keys", { permissions: { user: "read" } }, "permissions.user", "permissions.user is not one of users, wallets"],
    ["an unknown access level", "POST", "/v1/api-keys", { permissions: { users: "admin" } }, "permissions.users", "permissions.users must be one of read, write"],
    ["a metadata value that is not text", "POST", "/v1/user", { ...userInput(), metadata: { tier: 5 } }, "metadata", "metadata: value of \"tier\" must be a s"],
    ["a malformed metadata filter", "GET", "/v1/user?metadata=x", undefined, "metadata", "metadata: must be key-value pairs"],
    ["a bad field of a JSON body", "POST", "/v1/user", { ...userInput(), email: 5 }, "email", "email must be a string"],
  ])("%s", async (_case, method, path, body, param, message) => {
    const res = await rest(server, method, path, { headers: tenant.headers, body });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body).toMatchObject({ code: "BAD_USER_INPUT", param });
    expect(res.body.error).toMatch(new RegExp(`^${message.replace(/[.[\]]/g, "\\$&")}`));
  });
});
