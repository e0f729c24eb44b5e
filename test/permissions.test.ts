import { randomUUID } from "node:crypto";
import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  type GraphQLField,
  type GraphQLInputType,
} from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RESOURCES, type AccessLevel, type Permission, type Resource } from "../src/caller/permissions.js";
import { schema } from "../src/gateway/schema.js";
import { TYPE_RESOURCES } from "../src/graphql/type-resources.js";
import { EVENT_RESOURCES } from "../src/events/types.js";
import { permissionsNeeded } from "../src/pipeline/permissions.js";
import { selectedOperation } from "../src/pipeline/operations.js";
import { routes, sandboxRoutes } from "../src/rest/routes/index.js";
import { contractKeys, gql, rest, type HttpResult } from "./support/http.js";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";
import { subscriptionsOf } from "./support/subscriptions.js";

/**
 * SPEC §13: every operation of the GraphQL schema and of the /v1 route table, generated from them
 * (a new operation is covered by construction): a key with exactly what the operation needs passes
 * the permission rule (it may still be a 400/404 for lack of real data, never a 403 FORBIDDEN), and
 * a key without one of those permissions gets 403 FORBIDDEN naming it, on GraphQL and on REST.
 */
let server: TestServer;
let tenant: Tenant;
beforeAll(async () => {
  server = await startServer({ env: { SANDBOX: "true" } });
  tenant = await newTenant(server);
});
afterAll(() => server?.stop());
const subscriptions = subscriptionsOf(() => server.url);

type Grants = Partial<Record<Resource, AccessLevel>>;
const keys = new Map<string, Promise<string>>();
/** One key per distinct set of grants, made once for the whole file by the tenant's full key. */
function keyWith(grants: Grants): Promise<string> {
  const id = JSON.stringify(Object.entries(grants).sort());
  if (!keys.has(id)) {
    keys.set(
      id,
      rest(server, "POST", "/v1/api-keys", { headers: tenant.headers, body: { permissions: grants } }).then((res) => {
        if (res.status !== 200) throw new Error(`key ${id}: ${res.status} ${JSON.stringify(res.body)}`);
        return res.body.key as string;
      }),
    );
  }
  return keys.get(id)!;
}

const split = (permission: Permission) => permission.split(":") as [Resource, AccessLevel];
/** Exactly the grants that cover `needs` (write where a write is needed). */
function exactly(needs: Permission[]): Grants {
  const grants: Grants = {};
  for (const [resource, level] of needs.map(split)) if (grants[resource] !== "write") grants[resource] = level;
  return grants;
}
/**
 * What a field needs at run time beyond the rule, for what it shows: the feed, and an endpoint taking
 * every type, show every event type, so they need each type's resource read (docs/events-and-webhooks.md).
 */
const EVENT_READS: Grants = Object.fromEntries(Object.values(EVENT_RESOURCES).map((resource) => [resource, "read"]));
const runtimeNeeds = (rootNames: readonly string[]): Grants => (rootNames.some((name) => ["events", "createWebhookEndpoint"].includes(name)) ? EVENT_READS : {});

/** Everything but `missing`: every other resource with write, and `missing`'s resource with read when a write is missing. */
function allBut(missing: Permission): Grants {
  const [resource, level] = split(missing);
  const grants: Grants = Object.fromEntries(RESOURCES.filter((other) => other !== resource).map((other) => [other, "write"]));
  if (level === "write") grants[resource] = "read";
  return grants;
}

/** Mutation calls made here, per root field: the audit log must hold exactly as many entries (test below). */
const mutationCalls = new Map<string, number>();
const countCall = (operation: string) => mutationCalls.set(operation, (mutationCalls.get(operation) ?? 0) + 1);

// ---------- GraphQL: every root field of the schema ----------

/** Placeholder values: well-typed, pointing at nothing (a random id), so that passing the rule is at most a 400/404. */
function placeholder(type: GraphQLInputType): unknown {
  if (isNonNullType(type)) return placeholder(type.ofType);
  if (isListType(type)) return [placeholder(type.ofType)];
  if (isEnumType(type)) return type.getValues()[0].name;
  if (isInputObjectType(type)) {
    return Object.fromEntries(
      Object.values(type.getFields())
        .filter((field) => isNonNullType(field.type) && field.defaultValue === undefined)
        .map((field) => [field.name, placeholder(field.type)]),
    );
  }
  const scalars: Record<string, unknown> = { ID: randomUUID(), String: "x", Int: 1, Float: 1, Boolean: true, Decimal: "1", DateTime: new Date().toISOString(), Date: "2000-01-01", JSON: {} };
  return scalars[type.name] ?? "x";
}
/** Variables a placeholder cannot stand for: a restricted key may create only keys within its own grants. */
const OVERRIDES: Record<string, Record<string, unknown>> = { createApiKey: { input: { permissions: [{ resource: "API_KEYS", access: "READ" }] } } };

function operationFor(kind: "query" | "mutation" | "subscription", field: GraphQLField<unknown, unknown>) {
  const required = field.args.filter((arg) => isNonNullType(arg.type) || OVERRIDES[field.name]?.[arg.name] !== undefined);
  const declarations = required.map((arg) => `$${arg.name}: ${String(arg.type)}`).join(", ");
  const args = required.map((arg) => `${arg.name}: $${arg.name}`).join(", ");
  const selection = isObjectType(getNamedType(field.type)) ? "{ __typename }" : "";
  return {
    query: `${kind}${declarations ? ` (${declarations})` : ""} { ${field.name}${args ? `(${args})` : ""} ${selection} }`,
    variables: Object.fromEntries(required.map((arg) => [arg.name, OVERRIDES[field.name]?.[arg.name] ?? placeholder(arg.type)])),
  };
}

/** What a root field needs, read from its declaration (`permission`) and the classification of the type it returns. */
function declaredNeeds(field: GraphQLField<unknown, unknown>): Permission[] {
  const needs = new Set<Permission>();
  const declared = field.extensions.permission as string;
  if (declared.includes(":")) needs.add(declared as Permission);
  const resource = TYPE_RESOURCES[getNamedType(field.type).name];
  if (resource && !needs.has(`${resource}:write`)) needs.add(`${resource}:read`);
  return [...needs];
}

const rootFields = (["query", "mutation"] as const).flatMap((kind) =>
  Object.values((kind === "query" ? schema.getQueryType() : schema.getMutationType())!.getFields()).map((field) => ({ kind, field, name: `${kind} ${field.name}` })),
);

const refusalOf = (res: HttpResult) => (res.body.errors ?? []).find((error: { extensions?: { code?: string } }) => error.extensions?.code === "FORBIDDEN");

describe("every GraphQL root field (generated from the schema)", () => {
  it("covers the whole schema", () => {
    expect(rootFields.length).toBeGreaterThan(40);
    expect(rootFields.map((root) => root.field.name)).toEqual(expect.arrayContaining(["createUser", "users", "auditLog", "createApiKey", "withdrawToBank"]));
  });

  it.each(rootFields)("$name: passes with exactly what it needs; 403 FORBIDDEN naming each permission it lacks", async ({ kind, field }) => {
    const { query, variables } = operationFor(kind, field);
    const needs = declaredNeeds(field);
    const call = async (grants: Grants) => {
      if (kind === "mutation") countCall(field.name);
      return gql(server, query, variables, { "x-api-key": await keyWith(grants) });
    };
    // A key with nothing that matters here (or exactly the needs) is not refused by the rule.
    const allowed = await call(needs.length ? { ...runtimeNeeds([field.name]), ...exactly(needs) } : { ledger: "read" });
    expect(refusalOf(allowed), JSON.stringify(allowed.body)).toBeUndefined();
    expect(allowed.status).not.toBe(403);
    for (const missing of needs) {
      const refused = await call(allBut(missing));
      expect(refused.status, JSON.stringify(refused.body)).toBe(403);
      expect(refused.body.data ?? null).toBeNull();
      expect(refusalOf(refused)).toMatchObject({ message: expect.stringContaining(missing), path: [field.name], extensions: { code: "FORBIDDEN" } });
    }
  });

  it("a nested field needs its own resource: user { ledger } needs ledger:read besides users:read", async () => {
    countCall("createUser");
    const userId = (await rest(server, "POST", "/v1/user", {
      headers: tenant.headers,
      body: { email: `${randomUUID()}@example.com`, firstName: "Ada", lastName: "Lovelace", phoneNumber: "+14155552671", dob: "1990-01-01" },
    })).body.id;
    const query = `query ($id: ID!) { user(id: $id) { id ledger { edges { node { id } } } } }`;
    const usersOnly = await gql(server, query, { id: userId }, { "x-api-key": await keyWith({ users: "read" }) });
    expect(usersOnly.status).toBe(403);
    expect(usersOnly.body.errors).toEqual([expect.objectContaining({ path: ["user", "ledger"], message: expect.stringContaining("ledger:read") })]);
    const both = await gql(server, query, { id: userId }, { "x-api-key": await keyWith({ users: "read", ledger: "read" }) });
    expect(both.body).toEqual({ data: { user: { id: userId, ledger: { edges: [] } } } });
    // Through a fragment and an alias too.
    const viaFragment = await gql(server, `query ($id: ID!) { u: user(id: $id) { ...F } } fragment F on User { w: wallet { id } }`, { id: userId }, { "x-api-key": await keyWith({ users: "read" }) });
    expect(viaFragment.body.errors).toEqual([expect.objectContaining({ path: ["u", "w"], message: expect.stringContaining("wallets:read") })]);
  });

  it("a user named by its id only to reach another resource needs that resource's permission alone; showing the user, or listing users, needs users:read", async () => {
    countCall("createUser");
    const userId = (await rest(server, "POST", "/v1/user", {
      headers: tenant.headers,
      body: { email: `${randomUUID()}@example.com`, firstName: "Ada", lastName: "Lovelace", phoneNumber: "+14155552671", dob: "1990-01-01" },
    })).body.id;
    const ledgerOnly = { "x-api-key": await keyWith({ ledger: "read" }) };
    const served = [
      `query ($id: ID!) { user(id: $id) { ledger { edges { node { id } } } } }`,
      `query ($id: ID!) { user(id: $id) { id __typename ledgerPage { id } } }`,
      `query ($id: ID!) { u: user(id: $id) { ...L } } fragment L on User { ... on User { ledgerVerification { valid } } }`,
    ];
    for (const query of served) {
      const res = await gql(server, query, { id: userId }, ledgerOnly);
      expect(res.status, query).toBe(200);
      expect(res.body.errors, query).toBeUndefined();
    }
    const refused: [string, Record<string, unknown>, string[]][] = [
      [`query ($id: ID!) { user(id: $id) { email ledger { edges { node { id } } } } }`, { id: userId }, ["user"]],
      [`query ($id: ID!) { user(id: $id) { id } }`, { id: userId }, ["user"]],
      [`query ($id: ID!) { user(id: $id) { ...F ledgerPage { id } } } fragment F on User { firstName }`, { id: userId }, ["user"]],
      [`{ users { ledgerPage { id } } }`, {}, ["users"]],
    ];
    for (const [query, variables, path] of refused) {
      const res = await gql(server, query, variables, { "x-api-key": await keyWith({ ledger: "read" }) });
      expect(res.status, query).toBe(403);
      expect(res.body.errors, query).toEqual([expect.objectContaining({ path, message: expect.stringContaining("users:read") })]);
    }
  });

  it("write implies read; a session (x-client-auth) and a full key are not restricted", async () => {
    const writer = await gql(server, "{ users { id } }", {}, { "x-api-key": await keyWith({ users: "write" }) });
    expect(writer.status).toBe(200);
    const full = await gql(server, "{ auditLog { edges { node { id } } } }", {}, tenant.headers);
    expect(full.status).toBe(200);
  });
});

// ---------- REST: every route of the table ----------

const PATH_PLACEHOLDERS: Record<string, string> = { currency: "usd", page: "1", chain: "base" };
const REST_BODIES: Record<string, unknown> = { "/v1/api-keys": { permissions: { api_keys: "read" } } };
const restPath = (path: string) => path.replace(/:(\w+)/g, (_match, name: string) => PATH_PLACEHOLDERS[name] ?? randomUUID());

const restRoutes = [...routes, ...sandboxRoutes].map((route) => {
  const operation = selectedOperation(route.operation, undefined)!;
  const needs = permissionsNeeded(schema, route.operation, operation).map((need) => need.permission);
  const rootNames = operation.selectionSet.selections.flatMap((selection) => (selection.kind === "Field" ? [selection.name.value] : []));
  return { route, operation, needs, rootNames, name: `${route.method} ${route.path}` };
});

describe("every /v1 route (generated from the route table)", () => {
  it("each route needs exactly one permission, its resource's; a path below a user needs no users:read unless it shows the user", () => {
    for (const { route, rootNames, needs, name, operation } of restRoutes) {
      const declared = rootNames.map((root) => schema.getRootType(operation.operation)!.getFields()[root].extensions.permission as string);
      if (declared.every((permission) => !permission.includes(":"))) {
        expect(needs, name).toEqual([]);
        continue;
      }
      expect(needs, name).toHaveLength(1);
      if (!route.path.startsWith("/v1/user")) expect(needs, name).not.toContain("users:read");
    }
    const needsOf = (method: string, path: string) => restRoutes.find(({ route }) => route.method === method && route.path === path)!.needs;
    expect(needsOf("GET", "/v1/transactions/ledger/:userId")).toEqual(["ledger:read"]);
    expect(needsOf("GET", "/v1/transactions/deposits/:userId")).toEqual(["deposits:read"]);
    expect(needsOf("GET", "/v1/user/:userId")).toEqual(["users:read"]);
  });

  it.each(restRoutes)("$name: passes with exactly what it needs; 403 {error, code: FORBIDDEN} naming each permission it lacks", async ({ route, needs, operation, rootNames }) => {
    const path = restPath(route.path);
    const body = route.method === "POST" ? (REST_BODIES[route.path] ?? {}) : undefined;
    const call = async (grants: Grants) => {
      if (operation.operation === "mutation") rootNames.forEach(countCall);
      return rest(server, route.method, path, { headers: { "x-api-key": await keyWith(grants) }, body });
    };
    const allowed = await call(needs.length ? { ...runtimeNeeds(rootNames), ...exactly(needs) } : { ledger: "read" });
    expect(allowed.status, JSON.stringify(allowed.body)).not.toBe(403);
    for (const missing of needs) {
      const refused = await call(allBut(missing));
      expect(refused.status, JSON.stringify(refused.body)).toBe(403);
      expect(contractKeys(refused.body)).toEqual(["error"]);
      expect(refused.body).toMatchObject({ code: "FORBIDDEN", error: expect.stringContaining(missing) });
    }
  });
});

// ---------- Subscriptions: graphql-ws and SSE ----------

const subscriptionFields = Object.values(schema.getSubscriptionType()!.getFields());

describe("every subscription (generated from the schema), over graphql-ws and SSE", () => {
  it("depositUpdated is among them and needs deposits:read", () => {
    expect(declaredNeeds(schema.getSubscriptionType()!.getFields().depositUpdated)).toEqual(["deposits:read"]);
  });

  it.each(subscriptionFields.map((field) => ({ field, name: field.name })))("$name: refused without what it needs, opened with it", async ({ field }) => {
    const { query, variables } = operationFor("subscription", field);
    for (const missing of declaredNeeds(field)) {
      const key = await keyWith(allBut(missing));
      const ws = await subscriptions.ws({ "x-api-key": key }, query, variables);
      const wsRefusal = await ws.take();
      expect(wsRefusal.errors).toEqual([expect.objectContaining({ message: expect.stringContaining(missing), extensions: expect.objectContaining({ code: "FORBIDDEN" }) })]);
      const sse = await subscriptions.sse({ "x-api-key": key }, query, variables);
      const sseRefusal = sse.status === 403 ? undefined : await sse.take();
      if (sseRefusal) expect(sseRefusal.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
      else expect(sse.status).toBe(403);
    }
    const allowedKey = await keyWith({ ...runtimeNeeds([field.name]), ...exactly(declaredNeeds(field)) });
    const ws = await subscriptions.ws({ "x-api-key": allowedKey }, query, variables);
    const sse = await subscriptions.sse({ "x-api-key": allowedKey }, query, variables);
    expect(sse.status).toBe(200);
    // Open and quiet (no refusal), or refused for another reason than permissions (a placeholder user).
    for (const stream of [ws, sse]) {
      const first = await stream.take(500).catch(() => undefined);
      if (first) expect(first.errors?.map((error) => error.extensions?.code)).not.toContain("FORBIDDEN");
    }
  });
});

// ---------- No escalation ----------

describe("a restricted key never creates a key with more than it has", () => {
  it.each([
    ["a full key", undefined],
    ["a resource it lacks", { users: "read" }],
    ["write where it has read", { api_keys: "write", ledger: "write" }],
  ])("refuses %s (403 on REST and GraphQL); allows the same or less", async (_name, asked) => {
    const key = await keyWith({ api_keys: "write", ledger: "read" });
    const refused = await rest(server, "POST", "/v1/api-keys", { headers: { "x-api-key": key }, body: asked === undefined ? {} : { permissions: asked } });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("FORBIDDEN");
    const grants = asked === undefined ? null : Object.entries(asked).map(([resource, access]) => ({ resource: resource.toUpperCase(), access: access.toUpperCase() }));
    const viaGraphQL = await gql(server, `mutation ($input: CreateApiKeyInput) { createApiKey(input: $input) { id } }`, { input: grants ? { permissions: grants } : null }, { "x-api-key": key });
    expect(viaGraphQL.body.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
    countCall("createApiKey");
    countCall("createApiKey");
    const same = await rest(server, "POST", "/v1/api-keys", { headers: { "x-api-key": key }, body: { name: "child", permissions: { ledger: "read", api_keys: "read" } } });
    countCall("createApiKey");
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({ name: "child", permissions: { ledger: "read", api_keys: "read" } });
    const listed = await rest(server, "GET", "/v1/api-keys", { headers: tenant.headers });
    expect(listed.body.find((listedKey: { id: string }) => listedKey.id === same.body.id)).toMatchObject({ name: "child", permissions: { api_keys: "read", ledger: "read" } });
  });

  it("refuses to roll a key with more than it has (403 on REST and GraphQL, the key unchanged); rolls one within its grants with the same name and permissions", async () => {
    const key = await keyWith({ api_keys: "write", ledger: "read" });
    const full = await rest(server, "POST", "/v1/api-keys", { headers: tenant.headers, body: { name: "full" } });
    countCall("createApiKey");
    const refused = await rest(server, "POST", `/v1/api-keys/${full.body.id}/roll`, { headers: { "x-api-key": key }, body: { expiresInHours: 1 } });
    countCall("rollApiKey");
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("FORBIDDEN");
    const viaGraphQL = await gql(server, `mutation ($id: ID!) { rollApiKey(id: $id) { id } }`, { id: full.body.id }, { "x-api-key": key });
    countCall("rollApiKey");
    expect(viaGraphQL.body.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
    const fullKeyStillWorks = await rest(server, "GET", "/v1/api-keys", { headers: { "x-api-key": full.body.key } });
    expect(fullKeyStillWorks.status).toBe(200);
    expect(fullKeyStillWorks.body.find((listed: { id: string }) => listed.id === full.body.id)).toMatchObject({ expiresAt: null });

    const child = await rest(server, "POST", "/v1/api-keys", { headers: { "x-api-key": key }, body: { name: "child", permissions: { ledger: "read" } } });
    countCall("createApiKey");
    const rolled = await rest(server, "POST", `/v1/api-keys/${child.body.id}/roll`, { headers: { "x-api-key": key }, body: {} });
    countCall("rollApiKey");
    expect(rolled.status).toBe(200);
    expect(rolled.body).toMatchObject({ name: "child", permissions: { ledger: "read" } });
  });

  it("validates permissions: unknown resources and levels, an empty map, a resource twice (400 naming the field)", async () => {
    for (const permissions of [{ money: "read" }, { users: "admin" }, {}, "all"]) {
      const res = await rest(server, "POST", "/v1/api-keys", { headers: tenant.headers, body: { permissions } });
      countCall("createApiKey");
      expect(res.status, JSON.stringify(permissions)).toBe(400);
      expect(res.body.error).toMatch(/permissions/);
    }
    const twice = await gql(server, `mutation { createApiKey(input: {permissions: [{resource: USERS, access: READ}, {resource: USERS, access: WRITE}]}) { id } }`, {}, tenant.headers);
    countCall("createApiKey");
    expect(twice.body.errors?.[0]).toMatchObject({ extensions: { code: "BAD_USER_INPUT" }, message: expect.stringContaining("USERS".toLowerCase()) });
  });
});

// ---------- The audit log is complete ----------

describe("the audit log after every mutation above", () => {
  it("holds one entry per mutation root field each request ran or was refused, and no more", async () => {
    expect([...mutationCalls.keys()].sort()).toEqual(expect.arrayContaining(Object.keys(schema.getMutationType()!.getFields()).sort()));
    const entries = await server.app.db.prisma.auditLogEntry.findMany({ where: { clientId: tenant.clientId } });
    const counted = new Map<string, number>();
    // The tenant's own key creations (keyWith) are mutations too.
    for (const entry of entries) counted.set(entry.operation, (counted.get(entry.operation) ?? 0) + 1);
    const expected = new Map(mutationCalls);
    expected.set("createApiKey", (expected.get("createApiKey") ?? 0) + keys.size);
    expect(Object.fromEntries([...counted].sort())).toEqual(Object.fromEntries([...expected].sort()));
    const refusals = entries.filter((entry) => entry.outcome === "refused");
    expect(refusals.length).toBeGreaterThan(Object.keys(schema.getMutationType()!.getFields()).length);
    for (const refusal of refusals) expect(refusal.targetIds).toEqual([]);
  });
});
