import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { OpenApiDocument } from "../src/rest/openapi.js";
import { unknownFieldOf } from "../src/rest/request-fields.js";
import { routes, sandboxRoutes } from "../src/rest/routes/index.js";
import type { Route } from "../src/rest/route.js";
import { createUser, rest, userInput } from "./support/http.js";
import { craftSessionToken } from "./support/pipeline.js";
import { bankWithdrawalBody } from "./support/withdrawals.js";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";

/**
 * Every route of the /v1 table takes the query parameters and body fields its entry documents, and
 * no other: an unknown one is a 400 naming it, before anything runs (src/rest/request-fields.ts).
 */
let server: TestServer;
let tenant: Tenant;
let document: OpenApiDocument;
beforeAll(async () => {
  server = await startServer();
  tenant = await newTenant(server);
  document = await (await fetch(`${server.url}/v1/openapi.json`)).json();
});
afterAll(() => server?.stop());

const table = [...routes, ...sandboxRoutes].map((route) => ({ name: `${route.method} ${route.path}`, route }));
const withBody = table.filter(({ route }) => route.method !== "GET");

/** The route's path with every parameter a fresh id, which no static segment of the table matches. */
const pathOf = (route: Route) => route.path.replace(/:\w+/g, () => crypto.randomUUID());
/** A session route gets a session of its own (the positive case logs one out). */
const headersFor = async (route: Route): Promise<Record<string, string>> =>
  route.docs.auth === "public" ? {} : route.docs.auth === "session" ? { "x-client-auth": await craftSessionToken(server, tenant.clientId) } : tenant.headers;
/** What the document says the route takes: its query parameters and its body's fields. */
function documentedRequest(route: Route) {
  const operation = document.paths[route.path.replace(/:(\w+)/g, "{$1}")][route.method.toLowerCase() as "get"]!;
  const query = operation.parameters.filter((parameter) => parameter.in === "query");
  const body = operation.requestBody?.content["application/json"];
  return { query, body: body && { fields: Object.keys(resolvedProperties(body.schema)), example: body.example as Record<string, unknown> } };
}
function resolvedProperties(schema: Record<string, unknown>): Record<string, unknown> {
  const ref = schema.$ref as string | undefined;
  const shape = ref ? document.components.schemas[ref.split("/").pop()!] : schema;
  return (shape.properties ?? {}) as Record<string, unknown>;
}

const refusal = (name: string) => ({ error: `Received unknown parameter: ${name}`, code: "BAD_USER_INPUT", param: name, requestId: expect.any(String) });

describe("an unknown parameter is refused on every route of the table", () => {
  it.each(table)("$name: an unknown query parameter is a 400 naming it", async ({ route }) => {
    const res = await rest(server, route.method, `${pathOf(route)}?nope=1`, { headers: await headersFor(route) });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body).toEqual(refusal("nope"));
  });

  it.each(withBody)("$name: an unknown body field, beside its documented example, is a 400 naming it", async ({ route }) => {
    const body = { ...(documentedRequest(route).body?.example ?? {}), nope: 1 };
    const res = await rest(server, route.method, pathOf(route), { headers: await headersFor(route), body });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body).toEqual(refusal("nope"));
  });

  it.each(table)("$name: every parameter and field the OpenAPI document shows is taken (never refused as unknown)", async ({ route }) => {
    const { query, body } = documentedRequest(route);
    const search = query.map(({ name, style }) => (style === "deepObject" ? `${name}[tier]=gold` : `${name}=1`)).join("&");
    // Values that are wrong for most fields: the answer may refuse them, but never as unknown (and nothing reaches another host).
    const fields = Object.fromEntries((body?.fields ?? []).map((name) => [name, "x"]));
    const res = await rest(server, route.method, `${pathOf(route)}${search ? `?${search}` : ""}`, { headers: await headersFor(route), body: body ? fields : undefined });
    expect(String(res.body?.error ?? ""), JSON.stringify(res.body)).not.toMatch(/unknown parameter/);
  });
});

describe("the refusal", () => {
  it("creates nothing: a user with an extra field is not created; without it, it is", async () => {
    const externalId = `ext-${crypto.randomUUID()}`;
    const refused = await rest(server, "POST", "/v1/user", { headers: tenant.headers, body: { ...userInput({ externalId }), nope: 1 } });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual(refusal("nope"));
    expect((await rest(server, "GET", `/v1/user?externalId=${externalId}`, { headers: tenant.headers })).body).toEqual([]);
    await createUser(server, tenant, { externalId });
    expect((await rest(server, "GET", `/v1/user?externalId=${externalId}`, { headers: tenant.headers })).body).toHaveLength(1);
  });

  it("creates nothing: a USDC withdrawal with a misspelt optional field moves no money", async () => {
    const userId = await createUser(server, tenant);
    const funded = await rest(server, "POST", "/v1/sandbox/deposits", { headers: tenant.headers, body: { userId, currency: "USDC", amount: 50 } });
    expect(funded.status, JSON.stringify(funded.body)).toBeLessThan(300);
    const balancesBefore = (await rest(server, "GET", `/v1/balances/${userId}`, { headers: tenant.headers })).body;
    const body = { userId, amount: 5, walletAddress: "0x71C7656EC7ab88b098defB751B7401B5f6d8976F", network: "BASE", chainId: 8453, developerfee: 1 };
    const refused = await rest(server, "POST", "/v1/withdrawals/usdc", { headers: tenant.headers, body });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual(refusal("developerfee"));
    expect((await rest(server, "GET", `/v1/withdrawals/user/${userId}`, { headers: tenant.headers })).body).toEqual([]);
    expect((await rest(server, "GET", `/v1/balances/${userId}`, { headers: tenant.headers })).body).toEqual(balancesBefore);
  });

  it("names the field as sent, even where it looks like a field of the operation (`id`, `first`)", async () => {
    const userId = await createUser(server, tenant);
    const byId = await rest(server, "GET", `/v1/user/${userId}?id=${userId}`, { headers: tenant.headers });
    expect(byId.body).toEqual(refusal("id"));
    const auditLog = await rest(server, "GET", "/v1/audit-log?first=5", { headers: tenant.headers });
    expect(auditLog.body).toEqual(refusal("first"));
  });

  it("takes the metadata filters as metadata[key]; another bracketed name is unknown", async () => {
    expect((await rest(server, "GET", "/v1/user?metadata[tier]=gold", { headers: tenant.headers })).status).toBe(200);
    expect((await rest(server, "GET", "/v1/user?page[size]=5", { headers: tenant.headers })).body).toEqual(refusal("page[size]"));
  });

  it("below the top: a field a documented object does not have is refused naming it; metadata takes any key", async () => {
    const userId = await createUser(server, tenant);
    const withdrawal = { ...bankWithdrawalBody(userId, "USD", 5), bankAccount: { ...bankWithdrawalBody(userId, "USD", 5).bankAccount, nope: 1 } };
    const nested = await rest(server, "POST", "/v1/withdrawal/usd", { headers: tenant.headers, body: withdrawal });
    expect(nested.status).toBe(400);
    expect(nested.body).toMatchObject({ code: "BAD_USER_INPUT", param: "bankAccount.nope", error: "Received unknown parameter: bankAccount.nope" });
    const tagged = await rest(server, "PATCH", `/v1/user/${userId}`, { headers: tenant.headers, body: { metadata: { anything: "goes" } } });
    expect(tagged.status, JSON.stringify(tagged.body)).toBe(200);
  });

  it("comes after authentication: without a credential the answer is 401", async () => {
    const res = await rest(server, "POST", "/v1/user", { body: { ...userInput(), nope: 1 } });
    expect(res.status).toBe(401);
  });

  it("keeps every parameter the contract names for its routes", () => {
    // `METHOD /v1/path … body `{a: type, …}`` and `query `a` (…), `b` …` in the contract's endpoint tables and list.
    const contract = readFileSync(new URL("../docs/contract/rest-v1.md", import.meta.url), "utf8");
    const named = [...contract.matchAll(/\b(GET|POST)\b[\s|]*(\/v1\/[\w{}/-]+)[\s|]*(?:with )?(?:body `\{([^}]*)\}`|query ((?:`\w+`[^`:|]*)+))/g)].map(
      ([, method, path, body, query]) => ({
        method,
        path,
        place: body !== undefined ? "body" : "query",
        names: body !== undefined ? [...body.matchAll(/(\w+): \w+/g)].map(([, name]) => name) : [...query.matchAll(/`(\w+)`/g)].map(([, name]) => name),
      }),
    );
    expect(named.length).toBeGreaterThan(5);
    for (const { method, path, place, names } of named) {
      const route = table.find(({ route }) => route.method === method && route.path.replace(/:\w+/g, "{}") === path.replace(/\{\w+\}/g, "{}"))!.route;
      const documented = place === "body" ? (documentedRequest(route).body?.fields ?? []) : documentedRequest(route).query.map((parameter) => parameter.name);
      expect(documented, `${method} ${path}`).toEqual(expect.arrayContaining(names));
    }
  });
});

describe("the table cannot drift from what it documents", () => {
  const createUserRoute = table.find(({ name }) => name === "POST /v1/user")!.route;

  it("every route of the table reads exactly the fields it documents (or the server would not boot)", () => {
    for (const { route } of table) expect(() => unknownFieldOf(route)).not.toThrow();
  });

  it("a route reading a field it does not document, or documenting one it never reads, does not boot", () => {
    const reading: Route = { ...createUserRoute, variables: (input) => ({ ...createUserRoute.variables!(input), extra: input.body.extra }) };
    expect(() => unknownFieldOf(reading)).toThrow("REST route POST /v1/user reads the undocumented body field extra");
    const documenting: Route = { ...createUserRoute, docs: { ...createUserRoute.docs, body: createUserRoute.docs.body!.extend({ ghost: z.string() }) } };
    expect(() => unknownFieldOf(documenting)).toThrow("REST route POST /v1/user never reads its documented body field ghost");
  });
});
