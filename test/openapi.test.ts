import { existsSync, readFileSync } from "node:fs";
import { compileErrors, validate } from "@readme/openapi-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { routes, sandboxRoutes } from "../src/rest/routes/index.js";
import type { OpenApiDocument } from "../src/rest/openapi.js";
import type { Route } from "../src/rest/route.js";
import { rest } from "./support/http.js";
import { newTenant, startServer, type TestServer } from "./support/server.js";
import { bankWithdrawalBody, fundedUser } from "./support/withdrawals.js";

/** The binding REST contract, kept in the repository; the shared original, where present, must be the same text. */
const CONTRACT = new URL("../docs/contract/rest-v1.md", import.meta.url);
const SHARED_CONTRACT = new URL("../../shared/contract/rest-v1.md", import.meta.url);

let server: TestServer;
let document: OpenApiDocument;
beforeAll(async () => {
  server = await startServer();
  const res = await fetch(`${server.url}/v1/openapi.json`);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  document = await res.json();
});
afterAll(() => server?.stop());

/** `/v1/user/:userId` and `/v1/user/{id}` name the same path. */
const shape = (path: string) => path.replace(/:\w+|\{\w+\}/g, "{}");
const documented = () =>
  new Set(Object.entries(document.paths).flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${shape(path)}`)));

/** Every `/v1/…` path of the contract, with its method where the contract writes one before it. */
function contractEndpoints(): { method?: string; path: string }[] {
  const text = readFileSync(CONTRACT, "utf8");
  return [...text.matchAll(/(?:\b(GET|POST|DELETE)\b[\s|]*)?(\/v1\/[\w{}/-]+)/g)].map(([, method, path]) => ({ method, path }));
}

describe("GET /v1/openapi.json", () => {
  it("is a document the OpenAPI validator accepts", async () => {
    const result = await validate(structuredClone(document) as Parameters<typeof validate>[0]);
    expect(result.valid, result.valid ? "" : compileErrors(result)).toBe(true);
    expect(document.openapi).toBe("3.1.0");
  });

  it("describes every path of the REST contract, under the contract's method", () => {
    if (existsSync(SHARED_CONTRACT)) expect(readFileSync(CONTRACT, "utf8")).toBe(readFileSync(SHARED_CONTRACT, "utf8"));
    const endpoints = contractEndpoints();
    expect(endpoints.length).toBeGreaterThan(30);
    const paths = Object.keys(document.paths).map(shape);
    const operations = documented();
    // A path named in prose without a method ("under `/v1/accounts`") may be a prefix.
    const covered = ({ method, path }: { method?: string; path: string }) =>
      method ? operations.has(`${method} ${shape(path)}`) : paths.some((p) => p === shape(path) || p.startsWith(`${shape(path)}/`));
    const missing = endpoints.filter((endpoint) => !covered(endpoint));
    expect(missing).toEqual([]);
  });

  it("describes every route of the table with its path parameters, a success body and its errors", () => {
    for (const route of [...routes, ...sandboxRoutes]) {
      const path = Object.keys(document.paths).find((candidate) => shape(candidate) === shape(route.path));
      const operation = path ? document.paths[path][route.method.toLowerCase() as "get"] : undefined;
      expect(operation, `${route.method} ${route.path} is not in the document`).toBeDefined();
      const pathParameters = operation!.parameters.filter((p) => p.in === "path").map((p) => p.name);
      expect(pathParameters).toEqual([...route.path.matchAll(/:(\w+)/g)].map(([, name]) => name));
      expect(operation!.responses[String(route.status ?? 200)].content["application/json"].schema).toBeTruthy();
      expect(Object.keys(operation!.responses)).toContain("400");
    }
  });

  it("documents the contract's error bodies: {message} for the key revoke 404, {error, details} for withdrawal failures", () => {
    const errorBody = (path: string, method: "delete" | "post", status: string) =>
      document.paths[path][method]!.responses[status].content["application/json"].schema;
    expect(errorBody("/v1/api-keys/{keyId}", "delete", "404")).toMatchObject({ required: ["message"] });
    expect(errorBody("/v1/withdrawal/{currency}", "post", "500")).toMatchObject({
      properties: { error: { type: "string" }, details: { type: "string" } },
    });
    expect(errorBody("/v1/user", "post", "400")).toMatchObject({ required: ["error"] });
  });

  it("offers the x-api-key and x-client-auth schemes (and providers' signature), and needs none only to request and verify a code", () => {
    expect(document.components.securitySchemes).toEqual({
      apiKey: expect.objectContaining({ type: "apiKey", in: "header", name: "x-api-key" }),
      clientAuth: expect.objectContaining({ type: "apiKey", in: "header", name: "x-client-auth" }),
      webhookSignature: expect.objectContaining({ type: "apiKey", in: "header", name: "x-webhook-signature" }),
    });
    expect(document.paths["/v1/webhooks/{provider}"].post!.security).toEqual([{ webhookSignature: [] }]);
    expect(document.security).toEqual([{ apiKey: [] }, { clientAuth: [] }]);
    const publicOperations = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.entries(operations)
        .filter(([, operation]) => operation.security?.length === 0)
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    );
    expect(publicOperations.sort()).toEqual(["POST /v1/client-auth/otp", "POST /v1/client-auth/verify"]);
  });

  it("describes the answers the server really gives: the documented types, and no undocumented key", async () => {
    const tenant = await newTenant(server);
    const userId = await fundedUser(server, tenant, "USD", "100");
    const calls: [Route["method"], string, unknown?][] = [
      ["POST", "/v1/api-keys"],
      ["GET", "/v1/api-keys"],
      ["GET", `/v1/user/${userId}`],
      ["GET", "/v1/user"],
      ["POST", "/v1/wallet", { userId }],
      ["GET", `/v1/wallet/${userId}`],
      ["POST", "/v1/virtual-cards", { userId }],
      ["GET", `/v1/virtual-cards/${userId}`],
      ["POST", "/v1/sandbox/card-transactions", { userId, amount: 3, description: "Coffee" }],
      ["GET", `/v1/virtual-cards/transactions/${userId}/1`],
      ["POST", "/v1/virtual-account/ngn", { userId }],
      ["POST", "/v1/virtual-account/usd", { userId }],
      ["GET", `/v1/accounts/usd/${userId}`],
      ["POST", `/v1/accounts/usdc/${userId}`, { chainType: "BASE" }],
      ["GET", `/v1/accounts/usdc/${userId}`],
      ["GET", `/v1/accounts/usdc/${userId}/BASE`],
      ["GET", "/v1/conversion/quote?from=USD&to=EUR&amount=10"],
      ["POST", "/v1/conversion", { userId, from: "USD", to: "EUR", amount: 10 }],
      ["GET", "/v1/withdrawal/currencies"],
      ["POST", "/v1/withdrawal/usd", bankWithdrawalBody(userId, "USD", 5)],
      ["GET", `/v1/withdrawals/user/${userId}`],
      ["POST", "/v1/sandbox/deposits", { userId, currency: "NGN", amount: 1000 }],
      ["GET", `/v1/transactions/deposits/${userId}`],
      ["GET", `/v1/transactions/ledger/${userId}`],
      ["GET", `/v1/transactions/ledger/${userId}/verify`],
      ["GET", "/v1/transactions"],
    ];
    for (const [method, url, body] of calls) {
      const res = await rest(server, method, url, { headers: tenant.headers, body });
      expect(res.status, `${method} ${url}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
      const route = routeFor(method, url.split("?")[0]);
      const parsed = route.docs.response.safeParse(res.body);
      expect(parsed.success, `${method} ${route.path}: ${parsed.error?.message}`).toBe(true);
      const operation = document.paths[route.path.replace(/:(\w+)/g, "{$1}")][method.toLowerCase() as "get"]!;
      const schema = operation.responses[String(route.status ?? 200)].content["application/json"].schema;
      expect(undocumentedKeys(res.body, schema), `${method} ${route.path}`).toEqual([]);
    }
  });
});

/** The route of the table that answers this method and concrete path (the first, as Express picks). */
function routeFor(method: string, path: string): Route {
  const pattern = (route: Route) => new RegExp(`^${route.path.replace(/:\w+/g, "[^/]+")}$`);
  const route = [...routes, ...sandboxRoutes].find((candidate) => candidate.method === method && pattern(candidate).test(path));
  if (!route) throw new Error(`no route for ${method} ${path}`);
  return route;
}

type Schema = { type?: string; properties?: Record<string, Schema>; items?: Schema; anyOf?: Schema[]; additionalProperties?: unknown };

/** Keys of a body (and of its nested objects) that its documented schema does not name. */
function undocumentedKeys(body: unknown, schema: Schema, at = ""): string[] {
  if (Array.isArray(body)) return body.flatMap((item, i) => (schema.items ? undocumentedKeys(item, schema.items, `${at}[${i}]`) : []));
  if (body === null || typeof body !== "object") return [];
  const shapes = schema.anyOf ?? [schema];
  if (shapes.some((shape) => shape.additionalProperties !== undefined && shape.additionalProperties !== false)) return [];
  const known = Object.assign({}, ...shapes.map((shape) => shape.properties ?? {})) as Record<string, Schema>;
  return Object.entries(body).flatMap(([key, value]) =>
    known[key] ? undocumentedKeys(value, known[key].anyOf?.find((s) => s.type !== "null") ?? known[key], `${at}.${key}`) : [`${at}.${key}`],
  );
}
