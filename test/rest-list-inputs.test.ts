import { randomUUID } from "node:crypto";
import { z } from "zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { routes } from "../src/rest/routes/index.js";
import { contractKeys, gql, rest } from "./support/http.js";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";

/**
 * SPEC §6: a wrong type in a REST body is a 400 naming the field. GraphQL reads a single value given
 * for a list as a list of one; REST does not. Every list field of every documented body (found in the
 * route table's OpenAPI schemas) is sent as a single value.
 */
let server: TestServer;
let tenant: Tenant;
beforeAll(async () => {
  server = await startServer();
  tenant = await newTenant(server);
});
afterAll(() => server?.stop());

type JsonSchema = { $ref?: string; $defs?: Record<string, JsonSchema>; type?: string | string[]; anyOf?: JsonSchema[]; properties?: Record<string, JsonSchema> };

const listFields = routes.flatMap((route) => {
  if (!route.docs.body) return [];
  const document = z.toJSONSchema(route.docs.body, { io: "input", unrepresentable: "any" }) as JsonSchema;
  const resolved = (schema: JsonSchema): JsonSchema => (schema.$ref ? resolved(document.$defs![schema.$ref.replace("#/$defs/", "")]) : schema);
  const isList = (schema: JsonSchema): boolean => {
    const { type, anyOf } = resolved(schema);
    return type === "array" || (Array.isArray(type) && type.includes("array")) || !!anyOf?.some(isList);
  };
  return Object.entries(resolved(document).properties ?? {})
    .filter(([, schema]) => isList(schema))
    .map(([field]) => ({ route, field, name: `${route.method} ${route.path} ${field}` }));
});
const example = (body: unknown) => (body && typeof body === "object" ? (body as Record<string, unknown>) : {});

describe("a list field of a REST body sent as a single value", () => {
  it("covers the list fields of the table: allowedIps of API keys, events of webhook endpoints", () => {
    expect(listFields.map(({ name }) => name)).toEqual(expect.arrayContaining(["POST /v1/api-keys allowedIps", "POST /v1/webhook-endpoints events"]));
  });

  it.each(listFields)("$name: 400 naming the field; the same value in a list is not refused for its type", async ({ route, field }) => {
    const path = route.path.replace(/:(\w+)/g, () => randomUUID());
    const body = example(route.docs.example.body);
    const single = Array.isArray(body[field]) ? (body[field] as unknown[])[0] : "x";
    const refused = await rest(server, route.method, path, { headers: tenant.headers, body: { ...body, [field]: single } });
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(contractKeys(refused.body)).toEqual(["error"]);
    expect(refused.body).toMatchObject({ code: "BAD_USER_INPUT", error: `${field} must be a list` });
    const listed = await rest(server, route.method, path, { headers: tenant.headers, body: { ...body, [field]: [single] } });
    expect(listed.body.error ?? "").not.toContain("must be a list");
  });

  it("POST /v1/api-keys {allowedIps: \"127.0.0.1\"} makes no key; GraphQL keeps its own coercion (a single value is a list of one)", async () => {
    const before = await server.app.db.prisma.apiKey.count({ where: { clientId: tenant.clientId } });
    expect((await rest(server, "POST", "/v1/api-keys", { headers: tenant.headers, body: { allowedIps: "127.0.0.1" } })).status).toBe(400);
    expect(await server.app.db.prisma.apiKey.count({ where: { clientId: tenant.clientId } })).toBe(before);
    const viaGraphQL = await gql(server, "mutation ($input: CreateApiKeyInput) { createApiKey(input: $input) { allowedIps } }", { input: { allowedIps: "127.0.0.1" } }, tenant.headers);
    expect(viaGraphQL.body).toEqual({ data: { createApiKey: { allowedIps: ["127.0.0.1"] } } });
  });

  it("permissions, a map on REST, sent as anything but an object: 400 naming it", async () => {
    for (const permissions of ["all", ["users"], 5]) {
      const res = await rest(server, "POST", "/v1/api-keys", { headers: tenant.headers, body: { permissions } });
      expect(res.status, JSON.stringify(permissions)).toBe(400);
      expect(res.body).toMatchObject({ code: "BAD_USER_INPUT", param: "permissions" });
    }
  });
});
