import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compileErrors, dereference, validate } from "@readme/openapi-parser";
import { Ajv2020 } from "ajv/dist/2020.js";
import { getOperationAST } from "graphql";
import openapiTS, { astToString } from "openapi-typescript";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VIRTUAL_ACCOUNT_CURRENCIES } from "../src/accounts/virtual-account-currencies.js";
import { EVENT_TYPES } from "../src/events/types.js";
import { CURRENCIES } from "../src/providers/fx.js";
import { NETWORK_NAMES } from "../src/providers/chains.js";
import { routes, sandboxRoutes } from "../src/rest/routes/index.js";
import type { OpenApiDocument } from "../src/rest/openapi.js";
import type { Route } from "../src/rest/route.js";
import { createUser, rest, userInput } from "./support/http.js";
import { newTenant, startServer, type TestServer } from "./support/server.js";
import { bankWithdrawalBody, fundedUser } from "./support/withdrawals.js";

/** The binding REST contract, kept in the repository; the shared original, where present, must be the same text. */
const CONTRACT = new URL("../docs/contract/rest-v1.md", import.meta.url);
const SHARED_CONTRACT = new URL("../../shared/contract/rest-v1.md", import.meta.url);

let server: TestServer;
let document: OpenApiDocument;
/** The document with every $ref replaced by what it names. */
let resolved: OpenApiDocument;
beforeAll(async () => {
  server = await startServer();
  const res = await fetch(`${server.url}/v1/openapi.json`);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  document = await res.json();
  resolved = (await dereference(structuredClone(document) as unknown as Parameters<typeof dereference>[0])) as unknown as OpenApiDocument;
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
    const result = await validate(structuredClone(document) as unknown as Parameters<typeof validate>[0]);
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

  it("documents the contract's error bodies: {message} for the key revoke 404, {error, details} for withdrawal failures, each with code and requestId", () => {
    const errorBody = (path: string, method: "delete" | "post", status: string) =>
      (resolved.paths[path][method]!.responses[status].content["application/json"].schema as { allOf: Schema[] }).allOf[0];
    expect(errorBody("/v1/api-keys/{keyId}", "delete", "404")).toMatchObject({ required: ["message", "code", "requestId"] });
    expect(errorBody("/v1/withdrawal/{currency}", "post", "500")).toMatchObject({
      properties: { error: { type: "string" }, details: { anyOf: [{ type: "string" }, { type: "object" }] }, param: { type: "string" } },
    });
    expect(errorBody("/v1/user", "post", "400")).toMatchObject({ required: ["error", "code", "requestId"] });
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
      const operation = resolved.paths[route.path.replace(/:(\w+)/g, "{$1}")][method.toLowerCase() as "get"]!;
      const schema = operation.responses[String(route.status ?? 200)].content["application/json"].schema;
      expect(undocumentedKeys(res.body, schema), `${method} ${route.path}`).toEqual([]);
    }
  });

  it("describes the errors the server really gives: each body matches its operation's error schema, its code in that response's enum", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant, { externalId: `ext-${crypto.randomUUID()}` });
    const externalId = (await rest(server, "GET", `/v1/user/${userId}`, { headers: tenant.headers })).body.externalId;
    const key = "retry-1";
    await rest(server, "POST", "/v1/wallet", { headers: { ...tenant.headers, "idempotency-key": key }, body: { userId } });
    const calls: { method: Route["method"]; url: string; headers?: Record<string, string>; body?: unknown; rawBody?: string; status: number }[] = [
      { method: "POST", url: "/v1/user", body: {}, status: 400 },
      { method: "GET", url: "/v1/user", headers: { "x-api-key": "fpk_unknown" }, status: 401 },
      { method: "GET", url: `/v1/user/${crypto.randomUUID()}`, status: 404 },
      { method: "POST", url: "/v1/user", body: userInput({ externalId }), status: 409 },
      { method: "DELETE", url: `/v1/api-keys/${crypto.randomUUID()}`, status: 404 },
      { method: "POST", url: "/v1/wallet", headers: { "idempotency-key": key }, body: { userId: crypto.randomUUID() }, status: 422 },
      { method: "POST", url: "/v1/user", headers: { "content-type": "text/plain" }, rawBody: "x", status: 415 },
      { method: "POST", url: "/v1/conversion", body: { userId, from: "USD", to: "EUR", amount: 10 }, status: 400 },
      { method: "POST", url: "/v1/withdrawal/usd", body: bankWithdrawalBody(userId, "USD", 5), status: 500 },
    ];
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    for (const { method, url, headers, body, rawBody, status } of calls) {
      const res = await rest(server, method, url, { headers: { ...tenant.headers, ...headers }, body, rawBody });
      expect(res.status, `${method} ${url}: ${JSON.stringify(res.body)}`).toBe(status);
      const route = routeFor(method, url);
      const operation = resolved.paths[route.path.replace(/:(\w+)/g, "{$1}")][method.toLowerCase() as "get"]!;
      const schema = operation.responses[String(status)]?.content["application/json"].schema;
      expect(schema, `${method} ${route.path} documents no ${status}`).toBeDefined();
      expect(ajv.validate(schema, res.body), `${method} ${url}: ${ajv.errorsText()} in ${JSON.stringify(res.body)}`).toBe(true);
      expect(undocumentedKeys(res.body, schema), `${method} ${route.path}`).toEqual([]);
    }
  });

  it("narrows each error response's code to the codes its operation can answer with that status", () => {
    const codesAt = (path: string, method: "get" | "post", status: string) =>
      ((resolved.paths[path][method]!.responses[status].content["application/json"].schema as { allOf: Schema[] }).allOf.at(-1)!.properties!.code as { enum: string[] }).enum;
    expect(codesAt("/v1/conversion", "post", "400")!.sort()).toEqual(["BAD_USER_INPUT", "INSUFFICIENT_FUNDS"]);
    // The contract's legacy 500 for a withdrawal the balance does not cover.
    expect(codesAt("/v1/withdrawal/{currency}", "post", "400")).toEqual(["BAD_USER_INPUT"]);
    expect(codesAt("/v1/withdrawal/{currency}", "post", "500")!.sort()).toEqual(["INSUFFICIENT_FUNDS", "INTERNAL"]);
    expect(codesAt("/v1/user", "post", "400")).toEqual(["BAD_USER_INPUT"]);
    expect(codesAt("/v1/user", "post", "409")).toEqual(["CONFLICT"]);
    expect(resolved.paths["/v1/user"].get!.responses["409"]).toBeUndefined();
    expect(resolved.paths["/v1/user"].get!.responses["403"]).toBeDefined();
  });
});

type Operation = OpenApiDocument["paths"][string]["get"] & {};
const operations = (doc: OpenApiDocument) =>
  Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ name: `${method.toUpperCase()} ${path}`, operation: operation as Operation })));
const successOf = (operation: Operation) => Object.entries(operation.responses).find(([status]) => status.startsWith("2"))!;

describe("the OpenAPI document, as client generators read it", () => {
  it("names a server, and its schemas in components, which operations refer to", () => {
    expect(document.servers).toEqual([{ url: "/", description: expect.any(String) }]);
    expect(Object.keys(document.components.schemas)).toEqual(expect.arrayContaining(["User", "Deposit", "LedgerEntry", "Withdrawal", "WebhookEndpoint", "Event", "Error", "CreateUserRequest"]));
    const body = (path: string, method: "get" | "post") => document.paths[path][method]!;
    expect(body("/v1/user", "post").requestBody!.content["application/json"].schema).toEqual({ $ref: "#/components/schemas/CreateUserRequest" });
    expect(body("/v1/user/{userId}", "get").responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/User" });
    expect(body("/v1/transactions/deposits/{userId}", "get").responses["200"].content["application/json"].schema).toEqual({ type: "array", items: { $ref: "#/components/schemas/Deposit" } });
  });

  it("names each operation after the GraphQL operation its route runs (SDK method names), unique across the document", () => {
    const ids = operations(document).map(({ operation }) => operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const route of [...routes, ...sandboxRoutes]) {
      const name = getOperationAST(route.operation)?.name?.value;
      expect(name, `${route.method} ${route.path}: an unnamed GraphQL operation`).toBeDefined();
      const operation = document.paths[route.path.replace(/:(\w+)/g, "{$1}")][route.method.toLowerCase() as "get"]!;
      expect(operation.operationId).toBe(name!.charAt(0).toLowerCase() + name!.slice(1));
    }
    const id = (path: string, method: "get" | "post" | "patch") => document.paths[path][method]!.operationId;
    expect([id("/v1/user", "get"), id("/v1/user/{userId}", "get"), id("/v1/user", "post"), id("/v1/user/{userId}", "patch")]).toEqual(["listUsers", "getUser", "createUser", "updateUser"]);
    expect(id("/v1/webhooks/{provider}", "post")).toBe("receiveProviderEvent");
  });

  it("gives closed sets in requests as enums: currencies, networks, event types", () => {
    const schemas = resolved.components.schemas as Record<string, { properties: Record<string, Schema & { enum?: string[] }> }>;
    /** The values of a closed set, also inside an array or next to null. */
    const valuesOf = (schema: Schema & { enum?: string[] }): string[] | undefined =>
      schema.enum ?? (schema.items && valuesOf(schema.items)) ?? shapesOf(schema).filter((shape) => shape !== schema).map(valuesOf).find(Boolean);
    const pathParameter = (path: string, method: "get" | "post", name: string) => resolved.paths[path][method]!.parameters.find((p) => p.name === name)!.schema.enum;
    const query = (path: string, name: string) => resolved.paths[path].get!.parameters.find((p) => p.name === name)!.schema.enum;
    expect(pathParameter("/v1/virtual-account/{currency}", "post", "currency")).toEqual([...VIRTUAL_ACCOUNT_CURRENCIES]);
    expect(pathParameter("/v1/withdrawal/{currency}", "post", "currency")).toEqual(["USD", "EUR", "MXN", "BRL"]);
    expect(pathParameter("/v1/accounts/usdc/{userId}/{chain}", "get", "chain")).toEqual(NETWORK_NAMES);
    expect(query("/v1/conversion/quote", "from")).toEqual([...CURRENCIES]);
    expect(query("/v1/events", "type")).toEqual([...EVENT_TYPES]);
    expect(valuesOf(schemas.CreateVirtualAccountRequest.properties.destinationNetwork)).toEqual(NETWORK_NAMES);
    expect(valuesOf(schemas.UsdcWithdrawalRequest.properties.network)).toEqual(NETWORK_NAMES);
    expect(valuesOf(schemas.SimulateDepositRequest.properties.currency)).toEqual(expect.arrayContaining(["NGN", "USDC"]));
    expect(valuesOf(schemas.ConversionRequest.properties.to)).toEqual([...CURRENCIES]);
    expect(valuesOf(schemas.CreateWebhookEndpointRequest.properties.events)).toEqual([...EVENT_TYPES]);
  });

  it("has one example request and response per operation, each valid against the operation's schemas", () => {
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    ajv.addSchema({ components: document.components }, "document");
    const check = (name: string, what: string, media: { schema: Record<string, unknown>; example?: unknown } | undefined) => {
      expect(media?.example, `${name}: no ${what} example`).toBeDefined();
      const schema = JSON.parse(JSON.stringify(media!.schema).replaceAll('"#/components/', '"document#/components/'));
      const valid = ajv.validate(schema, media!.example);
      expect(valid, `${name} ${what}: ${ajv.errorsText()}`).toBe(true);
    };
    const all = operations(document);
    expect(all.length).toBeGreaterThan(45);
    for (const { name, operation } of all) {
      const [status, success] = successOf(operation);
      check(name, `${status} response`, success.content["application/json"]);
      if (operation.requestBody) check(name, "request", operation.requestBody.content["application/json"]);
    }
    // The examples name no key the schemas do not (zod's objects allow extra keys, so the validator would not see one).
    for (const { name, operation } of operations(resolved)) {
      const [, success] = successOf(operation);
      const media = success.content["application/json"];
      expect(undocumentedKeys(media.example, media.schema), name).toEqual([]);
      if (operation.requestBody) {
        const request = operation.requestBody.content["application/json"];
        expect(undocumentedKeys(request.example, request.schema), `${name} request`).toEqual([]);
      }
    }
  });

  it("passes @redocly/cli lint with its recommended rules, without an error, and the linter reaches no other host", { timeout: 60_000 }, async () => {
    const file = join(mkdtempSync(join(tmpdir(), "openapi-")), "openapi.json");
    writeFileSync(file, JSON.stringify(document));
    const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(
        join("node_modules", ".bin", "redocly"),
        ["lint", "--extends=recommended", "--format=json", file],
        {
          env: {
            ...process.env,
            // Redocly's usage telemetry, and its update notice, off; the guard refuses and reports any other connection.
            REDOCLY_TELEMETRY: "off",
            REDOCLY_SUPPRESS_UPDATE_NOTICE: "true",
            NODE_OPTIONS: `--require ${join(process.cwd(), "test/support/no-network.cjs")}`,
          },
          timeout: 50_000,
        },
        (_err, stdout, stderr) => resolve({ code: child.exitCode, stdout, stderr }),
      );
    });
    const report = JSON.parse(run.stdout) as { totals: { errors: number }; problems: { ruleId: string; severity: string; message: string }[] };
    expect(report.problems.filter((problem) => problem.severity === "error")).toEqual([]);
    expect(report.totals.errors).toBe(0);
    expect(run.code).toBe(0);
    expect(run.stderr).not.toContain("NETWORK REFUSED");
  });

  it("generates TypeScript types with openapi-typescript that type a client call: named bodies, enums, required fields", { timeout: 60_000 }, async () => {
    const types = astToString(await openapiTS(structuredClone(document) as unknown as Parameters<typeof openapiTS>[0]));
    const client = `${types}
type CreateUser = paths["/v1/user"]["post"];
type NewUser = CreateUser["requestBody"]["content"]["application/json"];
type VirtualAccountCurrency = paths["/v1/virtual-account/{currency}"]["post"]["parameters"]["path"]["currency"];
// The one platform function the client uses (declared here: the DOM library is slow to type-check).
declare function fetch(url: string, init: { method: string; headers: Record<string, string>; body: string }): Promise<{ json(): Promise<unknown> }>;

/** A typed call: the body and the answer come from the document. */
export async function createUser(baseUrl: string, apiKey: string, body: NewUser): Promise<components["schemas"]["User"]> {
  const res = await fetch(\`\${baseUrl}/v1/user\`, { method: "POST", headers: { "x-api-key": apiKey, "content-type": "application/json" }, body: JSON.stringify(body) });
  const created = (await res.json()) as CreateUser["responses"][201]["content"]["application/json"];
  return created;
}

/** The error bodies of an operation, as openapi-fetch types \`error\`: the JSON of every non-2xx response. */
type ErrorOf<Op extends { responses: object }> = {
  [Status in keyof Op["responses"]]: Status extends 200 | 201 | 204 ? never : Op["responses"][Status] extends { content: { "application/json": infer Body } } ? Body : never;
}[keyof Op["responses"]];
declare const r: { data?: components["schemas"]["User"]; error?: ErrorOf<CreateUser> };
export const code = r.error?.code;
export const handled = r.error && (r.error.code === "CONFLICT" ? r.error.details?.id : r.error.code === "BAD_USER_INPUT" ? r.error.param : r.error.requestId);
export const message = r.error && ("error" in r.error ? r.error.error : undefined);
// @ts-expect-error creating a user never answers INSUFFICIENT_FUNDS
export const impossible = r.error?.code === "INSUFFICIENT_FUNDS";

export const call = () => createUser("http://localhost:4000", "fpk_…", { email: "ada@example.com", firstName: "Ada", lastName: "Lovelace", phoneNumber: "+14155552671", dob: "1990-05-17" });
export const email = async () => (await call()).email.toLowerCase();
export const ngn: VirtualAccountCurrency = "NGN";
export const everyType: components["schemas"]["WebhookEndpoint"]["events"] = null;
export const someTypes: components["schemas"]["CreateWebhookEndpointRequest"]["events"] = ["deposit.completed"];
// @ts-expect-error a currency outside the enum
export const unknownCurrency: VirtualAccountCurrency = "XYZ";
// @ts-expect-error an event type outside the enum
export const unknownType: components["schemas"]["CreateWebhookEndpointRequest"]["events"] = ["user.deleted"];
// @ts-expect-error firstName is required
export const incomplete: NewUser = { email: "ada@example.com", lastName: "Lovelace", phoneNumber: "+14155552671", dob: "1990-05-17" };
// @ts-expect-error a user has no balance field
export const balance = async () => (await call()).balance;
`;
    const file = join(mkdtempSync(join(tmpdir(), "openapi-client-")), "client.ts");
    writeFileSync(file, client);
    const program = ts.createProgram([file], { strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ES2022, lib: ["lib.es2022.d.ts"], types: [] });
    const problems = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
    expect(problems).toEqual([]);
  });
});

/** The route of the table that answers this method and concrete path (the first, as Express picks). */
function routeFor(method: string, path: string): Route {
  const pattern = (route: Route) => new RegExp(`^${route.path.replace(/:\w+/g, "[^/]+")}$`);
  const route = [...routes, ...sandboxRoutes].find((candidate) => candidate.method === method && pattern(candidate).test(path));
  if (!route) throw new Error(`no route for ${method} ${path}`);
  return route;
}

type Schema = { type?: string; properties?: Record<string, Schema>; items?: Schema; anyOf?: Schema[]; oneOf?: Schema[]; allOf?: Schema[]; additionalProperties?: unknown };

/** The alternatives a schema allows, unions of unions flattened, and the parts of an `allOf` as one object. */
const shapesOf = (schema: Schema): Schema[] => {
  if (schema.allOf) return [{ type: "object", properties: Object.assign({}, ...schema.allOf.flatMap(shapesOf).map((part) => part.properties)) }];
  return schema.anyOf || schema.oneOf ? [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].flatMap(shapesOf) : [schema];
};

/** Keys of a body (and of its nested objects) that its documented schema does not name. */
function undocumentedKeys(body: unknown, schema: Schema, at = ""): string[] {
  if (body === null || typeof body !== "object") return [];
  const shapes = shapesOf(schema).filter((shape) => shape.type !== "null");
  // A union: the body is documented when one of its alternatives documents every key.
  if (shapes.length > 1) return shapes.map((shape) => undocumentedKeys(body, shape, at)).reduce((fewest, keys) => (keys.length < fewest.length ? keys : fewest));
  const [shape] = shapes;
  if (!shape) return [];
  if (Array.isArray(body)) return body.flatMap((item, i) => (shape.items ? undocumentedKeys(item, shape.items, `${at}[${i}]`) : []));
  if (shape.additionalProperties !== undefined && shape.additionalProperties !== false) return [];
  const known = shape.properties ?? {};
  return Object.entries(body).flatMap(([key, value]) => (known[key] ? undocumentedKeys(value, known[key], `${at}.${key}`) : [`${at}.${key}`]));
}
