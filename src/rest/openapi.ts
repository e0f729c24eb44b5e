import { z } from "zod";
import { ERROR_CODES, type ErrorCode } from "../errors.js";
import type { DocumentedEndpoint } from "./route.js";
import { schema } from "../gateway/schema.js";
import { selectedOperation } from "../pipeline/operations.js";
import { permissionsNeeded } from "../pipeline/permissions.js";

type JsonSchema = Record<string, unknown>;
type SecurityRequirement = Record<string, string[]>;
type Parameter = {
  name: string;
  in: "path" | "query" | "header";
  required: boolean;
  description?: string;
  style?: "deepObject";
  explode?: boolean;
  schema: JsonSchema;
};
type MediaType = { "application/json": { schema: JsonSchema; example?: unknown } };
type Response = { description: string; content: MediaType };
type Operation = {
  operationId: string;
  summary: string;
  description?: string;
  /** What a restricted API key needs (SPEC §13), as `resource:level`. */
  "x-permissions"?: string[];
  tags: string[];
  security?: SecurityRequirement[];
  parameters: Parameter[];
  requestBody?: { required: boolean; content: MediaType };
  responses: Record<string, Response>;
};
export type OpenApiDocument = {
  openapi: "3.1.0";
  info: { title: string; version: string; description: string };
  servers: { url: string; description: string }[];
  paths: Record<string, Partial<Record<"get" | "post" | "patch" | "delete", Operation>>>;
  components: { schemas: Record<string, JsonSchema>; securitySchemes: Record<string, JsonSchema> };
  security: SecurityRequirement[];
};

const ERROR_MEANINGS: Record<ErrorCode, string> = {
  BAD_USER_INPUT: "invalid input: the message names the field",
  UNAUTHENTICATED: "missing, unknown, revoked or expired credentials",
  FORBIDDEN: "not allowed: the API key lacks the permission the message names (`resource:level`), or is used from an address outside its allowlist",
  TEST_MODE_ONLY: "a sandbox helper or simulation, called with a live-mode credential: use a test key (or a session with x-mode: test)",
  TEST_MODE_DISABLED: "a test-mode credential, on a server whose test mode is off (SANDBOX=false)",
  NOT_FOUND: "unknown resource, or one of another client or of the other mode",
  METHOD_NOT_ALLOWED: "the path does not take this method",
  CONFLICT: "the resource's state does not allow it, a user's externalId is another user's (`details.id` names that user), or a request with this Idempotency-Key is still running",
  IDEMPOTENCY_MISMATCH: "this Idempotency-Key was used with a different request, or by another credential",
  PAYLOAD_TOO_LARGE: "body over 100 kB",
  UNSUPPORTED_MEDIA_TYPE: "a body that is not JSON: send it with Content-Type: application/json",
  INSUFFICIENT_FUNDS: "the balance does not cover the amount",
  RATE_LIMITED: "too many requests: retry after the Retry-After header's seconds",
  PROVIDER_ERROR: "an external provider failed: `details` says what happened",
  INTERNAL: "unexpected error",
  SERVICE_UNAVAILABLE: "the database is unreachable for now: retry after the Retry-After header's seconds",
};

/** Errors any route may answer. */
const COMMON_ERRORS: ErrorCode[] = ["BAD_USER_INPUT", "RATE_LIMITED", "SERVICE_UNAVAILABLE", "INTERNAL"];
/** Errors the Idempotency-Key adds to every write. */
const WRITE_ERRORS: ErrorCode[] = ["CONFLICT", "IDEMPOTENCY_MISMATCH"];

const CREDENTIALS: SecurityRequirement[] = [{ apiKey: [] }, { clientAuth: [] }];
const SECURITY: Record<NonNullable<DocumentedEndpoint["docs"]["auth"]>, SecurityRequirement[]> = {
  credentials: CREDENTIALS,
  session: [{ clientAuth: [] }],
  public: [],
  signature: [{ webhookSignature: [] }],
};

/**
 * The fields of every error body (src/rest/respond.ts): the message under `error` (or `message`, where
 * the contract says so), the machine-readable `code`, the `requestId` to quote to support, and `details`
 * and `param` when the error has them. Each response narrows `code` to the codes its operation can
 * answer with that status (`errorResponses`).
 */
function errorBody(messageField: "error" | "message", details: JsonSchema): JsonSchema {
  return {
    type: "object",
    properties: {
      [messageField]: { type: "string", description: "what went wrong; a 400 names the field" },
      code: { $ref: "#/components/schemas/ErrorCode" },
      requestId: { type: "string", description: "this request's id (also the x-request-id header): quote it to support" },
      details,
      param: { type: "string", description: "the input field at fault, when the error names one" },
    },
    required: [messageField, "code", "requestId"],
  };
}

const TEXT_OR_FIELDS: JsonSchema = {
  description: "more about what happened: text, or a small object naming what the error is about",
  anyOf: [{ type: "string" }, { type: "object", additionalProperties: { type: "string" } }],
};

/** The error bodies: `{error}`, a 409's that may name the record in the way, and the contract's `{message}` of the key revoke 404. */
const ERROR_SCHEMAS: Record<string, JsonSchema> = {
  ErrorCode: { type: "string", enum: Object.keys(ERROR_CODES), description: "what kind of error it is, for a program to act on (the message is for people)" },
  Error: errorBody("error", TEXT_OR_FIELDS),
  ConflictError: errorBody("error", {
    type: "object",
    description: "the record in the way: a user's externalId already taken names that user",
    properties: { id: { type: "string" } },
  }),
  MessageError: errorBody("message", TEXT_OR_FIELDS),
};

/**
 * The OpenAPI 3.1 description of the given endpoints: the route table is the one source of the
 * document. Schemas named with `named` (src/rest/docs.ts) are written once, under
 * `components.schemas`, and referred to wherever they appear.
 */
export function openApiDocument(routes: readonly DocumentedEndpoint[], options: { schemaPublished: boolean }): OpenApiDocument {
  const schemas = new NamedSchemas();
  const paths: OpenApiDocument["paths"] = {};
  const ids = routes.map(operationId);
  const repeated = ids.find((id, i) => ids.indexOf(id) !== i);
  if (repeated) throw new Error(`Two endpoints have the operationId ${repeated}: name their GraphQL operations apart`);
  for (const route of routes) {
    const path = route.path.replace(/:(\w+)/g, "{$1}");
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: operation(route, schemas) };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Fintech Platform API",
      version: "v1",
      description:
        "The /v1 REST surface. Every path runs a GraphQL operation of the schema served at /graphql" +
        (options.schemaPublished ? " (printed at /graphql/schema.graphql). " : ". ") +
        "Money is a JSON number here and an exact decimal string in GraphQL. " +
        "Codes (currencies, networks) are accepted in any case.",
    },
    // Relative: the server that serves this document (its paths start with /v1).
    servers: [{ url: "/", description: "this server" }],
    paths,
    components: {
      schemas: { ...schemas.all(), ...ERROR_SCHEMAS },
      securitySchemes: {
        apiKey: { type: "apiKey", in: "header", name: "x-api-key", description: "A long-lived API key (`fpk_…`)." },
        clientAuth: {
          type: "apiKey",
          in: "header",
          name: "x-client-auth",
          description: "A session JWT from POST /v1/client-auth/verify; wins over x-api-key when both are sent.",
        },
        webhookSignature: {
          type: "apiKey",
          in: "header",
          name: "x-webhook-signature",
          description: "Providers only: `t=<unix seconds>,v1=<hex HMAC-SHA256 of \"t.rawBody\">`, refused when older than 5 minutes.",
        },
      },
    },
    security: CREDENTIALS,
  };
}

/** What a restricted API key needs for the route: what its GraphQL operation needs (src/pipeline/permissions.ts). */
function permissionsOf(route: DocumentedEndpoint): string[] {
  const selected = route.operation && selectedOperation(route.operation, undefined);
  return selected ? permissionsNeeded(schema, route.operation!, selected).map((need) => need.permission) : [];
}

function operation(route: DocumentedEndpoint, schemas: NamedSchemas): Operation {
  const { docs } = route;
  const permissions = permissionsOf(route);
  const needs = permissions.length ? `Restricted API keys need ${permissions.map((permission) => `\`${permission}\``).join(" and ")}.` : "";
  const description = [docs.description, needs].filter(Boolean).join("\n\n");
  const auth = docs.auth ?? "credentials";
  // The Idempotency-Key is per client and credential: only writes with a client's credentials take part.
  const writes = route.method !== "GET" && (auth === "credentials" || auth === "session");
  return {
    operationId: operationId(route),
    summary: docs.summary,
    ...(description ? { description } : {}),
    ...(permissions.length ? { "x-permissions": permissions } : {}),
    tags: [route.path.split("/")[2]],
    ...(auth === "credentials" ? {} : { security: SECURITY[auth] }),
    parameters: [...pathParameters(route, schemas), ...queryParameters(route, schemas), ...(writes ? [IDEMPOTENCY_KEY] : [])],
    ...(docs.body ? { requestBody: { required: true, content: json(schemas.render(docs.body), docs.example.body) } } : {}),
    responses: {
      [String(route.status ?? 200)]: { description: "Success", content: json(schemas.render(docs.response), docs.example.response) },
      ...errorResponses(route, [
        ...COMMON_ERRORS,
        ...(auth === "public" ? [] : (["UNAUTHENTICATED"] as const)),
        // An API key used from outside its allowlist, or without a permission the operation needs.
        ...(auth === "credentials" || permissions.length ? (["FORBIDDEN"] as const) : []),
        ...(writes ? WRITE_ERRORS : []),
        ...(docs.body ? (["UNSUPPORTED_MEDIA_TYPE", "PAYLOAD_TOO_LARGE"] as const) : []),
        ...(docs.errors ?? []),
      ]),
    },
  };
}

/**
 * The name of the GraphQL operation the route runs, as an SDK method name: `query ListUsers` →
 * `listUsers`, `mutation CreateUser` → `createUser`. An endpoint that runs none names its own.
 */
function operationId(route: DocumentedEndpoint): string {
  const name = route.operation ? selectedOperation(route.operation, undefined)?.name?.value : route.operationId;
  if (!name) throw new Error(`${route.method} ${route.path}: its GraphQL operation needs a name (the document's operationId)`);
  return name.charAt(0).toLowerCase() + name.slice(1);
}

function pathParameters(route: DocumentedEndpoint, schemas: NamedSchemas): Parameter[] {
  return [...route.path.matchAll(/:(\w+)/g)].map(([, name]): Parameter => {
    const documented = route.docs.params?.[name];
    if (documented === undefined || typeof documented === "string") {
      return { name, in: "path", required: true, ...(documented ? { description: documented } : {}), schema: { type: "string" } };
    }
    const { description, ...schema } = schemas.render(documented);
    return { name, in: "path", required: true, ...(typeof description === "string" ? { description } : {}), schema };
  });
}

function queryParameters(route: DocumentedEndpoint, schemas: NamedSchemas): Parameter[] {
  const query = route.docs.query;
  if (!query) return [];
  const schema = schemas.render(query) as { properties: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(schema.properties).map(([name, { description, ...property }]) => ({
    name,
    in: "query",
    required: schema.required?.includes(name) ?? false,
    ...(typeof description === "string" ? { description } : {}),
    // An object is sent as name[key]=value (the metadata filters).
    ...(property.type === "object" ? { style: "deepObject", explode: true } : {}),
    schema: property,
  }));
}

const IDEMPOTENCY_KEY: Parameter = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    "Makes a retry safe: a repeated request with the same key and body, from the same credential, gets the first answer (kept 24 h). " +
    "Another credential of the client under the same key is a 422.",
  schema: { type: "string", minLength: 1, maxLength: 255 },
};

/**
 * One response per status. The body follows the route's overrides of the contract: `{error}` by
 * default, `{message}` where the contract says so (the key revoke 404); its `code` is one of the codes
 * the operation answers with that status, so a generated client can switch on it.
 */
function errorResponses(route: DocumentedEndpoint, codes: readonly ErrorCode[]): Record<string, Response> {
  const byStatus = new Map<number, { codes: ErrorCode[]; field: string }>();
  for (const code of new Set(codes)) {
    const override = route.errors?.[code] ?? {};
    const status = override.status ?? ERROR_CODES[code];
    const entry = byStatus.get(status) ?? { codes: [], field: override.field ?? "error" };
    entry.codes.push(code);
    byStatus.set(status, entry);
  }
  return Object.fromEntries(
    [...byStatus].map(([status, { codes, field }]) => [
      String(status),
      {
        description: codes.map((code) => ERROR_MEANINGS[code]).join("; "),
        content: {
          "application/json": {
            schema: {
              allOf: [
                { $ref: `#/components/schemas/${errorSchemaName(field, status)}` },
                { type: "object", properties: { code: { type: "string", enum: codes } }, required: ["code"] },
              ],
            },
          },
        },
      },
    ]),
  );
}

const errorSchemaName = (field: string, status: number) => (field === "message" ? "MessageError" : status === ERROR_CODES.CONFLICT ? "ConflictError" : "Error");

const json = (schema: JsonSchema, example: unknown): MediaType => ({
  "application/json": { schema, ...(example === undefined ? {} : { example }) },
});

/**
 * Renders zod schemas as JSON Schema (as the request arrives: `io: "input"`, so a service's own input
 * schema can be used as it is), keeping the named ones aside for `components.schemas`.
 */
class NamedSchemas {
  private readonly named = new Map<string, JsonSchema>();

  render(schema: z.ZodType): JsonSchema {
    const { $schema: _dialect, $defs, ...rendered } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" });
    for (const [name, definition] of Object.entries($defs ?? {})) {
      const written = toComponentRefs(definition as JsonSchema);
      const earlier = this.named.get(name);
      if (earlier && JSON.stringify(earlier) !== JSON.stringify(written)) throw new Error(`Two different schemas are named ${name}`);
      this.named.set(name, written);
    }
    return toComponentRefs(rendered);
  }

  all(): Record<string, JsonSchema> {
    return Object.fromEntries([...this.named].sort(([a], [b]) => a.localeCompare(b)));
  }
}

/** zod refers to a named schema as `#/$defs/Name`; the document keeps them under `#/components/schemas/`. */
const toComponentRefs = (schema: JsonSchema): JsonSchema =>
  JSON.parse(JSON.stringify(schema).replaceAll('"$ref":"#/$defs/', '"$ref":"#/components/schemas/'));
