import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { filteredUserIdsQuery } from "../src/users/service.js";
import { waitForEvents } from "./support/events.js";
import { contractBody, createUser, gql, rest, statusCounts, userInput } from "./support/http.js";
import { needs, REQUIREMENTS } from "./support/requirements.js";
import { newTenant, startServer, testDatabaseUrl, type Tenant, type TestServer } from "./support/server.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

const USER_FIELDS = "id externalId metadata";
const CREATE_USER = `mutation ($input: CreateUserInput!) { createUser(input: $input) { ${USER_FIELDS} } }`;
const UPDATE_USER = `mutation ($id: ID!, $input: UpdateUserInput!) { updateUser(id: $id, input: $input) { ${USER_FIELDS} } }`;
const USERS = `query ($externalId: String, $metadata: JSON, $limit: Int) { users(externalId: $externalId, metadata: $metadata, limit: $limit) { ${USER_FIELDS} } }`;

type Outcome = { status: number; error?: string; code?: string; details?: unknown; user?: Record<string, any> };

/** One write on either surface, as one shape: the REST status or the GraphQL error's HTTP-equivalent code. */
const surfaces = {
  REST: {
    create: async (tenant: Tenant, input: Record<string, unknown>): Promise<Outcome> => {
      const res = await rest(server, "POST", "/v1/user", { headers: tenant.headers, body: input });
      return res.status === 201 ? { status: 201, user: res.body } : { status: res.status, error: res.body.error, code: res.body.code, details: res.body.details };
    },
    update: async (tenant: Tenant, id: string, input: Record<string, unknown>): Promise<Outcome> => {
      const res = await rest(server, "PATCH", `/v1/user/${id}`, { headers: tenant.headers, body: input });
      return res.status === 200 ? { status: 200, user: res.body } : { status: res.status, error: res.body.error, code: res.body.code, details: res.body.details };
    },
  },
  GraphQL: {
    create: async (tenant: Tenant, input: Record<string, unknown>): Promise<Outcome> => graphqlOutcome(await gql(server, CREATE_USER, { input }, tenant.headers), "createUser", 201),
    update: async (tenant: Tenant, id: string, input: Record<string, unknown>): Promise<Outcome> =>
      graphqlOutcome(await gql(server, UPDATE_USER, { id, input }, tenant.headers), "updateUser", 200),
  },
};
const STATUS_OF: Record<string, number> = { BAD_USER_INPUT: 400, NOT_FOUND: 404, CONFLICT: 409 };

function graphqlOutcome(res: { body: { data?: any; errors?: { message: string; extensions?: Record<string, any> }[] } }, field: string, okStatus: number): Outcome {
  const error = res.body.errors?.[0];
  if (!error) return { status: okStatus, user: res.body.data[field] };
  const code = error.extensions?.code as string;
  return { status: STATUS_OF[code] ?? 500, error: error.message, code, details: error.extensions?.details };
}

const manyKeys = (count: number, prefix = "k") => Object.fromEntries(Array.from({ length: count }, (_, i) => [`${prefix}${i}`, "v"]));

describe.each(Object.entries(surfaces))("metadata on users over %s", (_surface, surface) => {
  it("is stored on create, with externalId, and both are returned on every read", async () => {
    const tenant = await newTenant(server);
    const metadata = { segment: "gold", "with spaces and ünïcode": "yes", empty: "", gone: null };
    const created = await surface.create(tenant, userInput({ externalId: "cus_1", metadata }));
    expect(created.status, created.error).toBe(201);
    const expected = { segment: "gold", "with spaces and ünïcode": "yes" };
    expect(created.user).toMatchObject({ externalId: "cus_1", metadata: expected });
    const id = created.user!.id;
    const byId = await rest(server, "GET", `/v1/user/${id}`, { headers: tenant.headers });
    expect(byId.body).toMatchObject({ externalId: "cus_1", metadata: expected });
    const listed = await rest(server, "GET", "/v1/user", { headers: tenant.headers });
    expect(listed.body[0]).toMatchObject({ externalId: "cus_1", metadata: expected });
    const viaGraphql = await gql(server, `query ($id: ID!) { user(id: $id) { externalId metadata } }`, { id }, tenant.headers);
    expect(viaGraphql.body.data.user).toEqual({ externalId: "cus_1", metadata: expected });
    const [event] = await waitForEvents(server, tenant, 1, "&type=user.created");
    expect(event.data.object).toMatchObject({ id, externalId: "cus_1", metadata: expected });
  });

  it("gives a user created without them metadata {} and externalId null", async () => {
    const created = await surface.create(await newTenant(server), userInput());
    expect(created.user).toMatchObject({ externalId: null, metadata: {} });
  });

  it.each([
    ["51 keys", manyKeys(51), /at most 50 keys/],
    ["a 41-character key", { ["k".repeat(41)]: "v" }, new RegExp(`key "${"k".repeat(41)}" must be 1 to 40 characters`)],
    ["an empty key", { "": "v" }, /key "" must be 1 to 40 characters/],
    ["[ in a key", { "order[id": "v" }, /key "order\[id" must not contain \[ or \]/],
    ["] in a key", { "orderid]": "v" }, /key "orderid\]" must not contain \[ or \]/],
    ["a 501-character value", { note: "x".repeat(501) }, /value of "note" must be at most 500 characters/],
    ["a number value", { count: 5 }, /value of "count" must be a string/],
    ["a boolean value", { vip: true }, /value of "vip" must be a string/],
    ["an object value", { nested: { a: "b" } }, /value of "nested" must be a string/],
    ["a list", ["a", "b"], /metadata: must be an object/],
    ["a string", "segment=gold", /metadata: must be an object/],
  ])("refuses %s with 400 naming the key", async (_case, metadata, message) => {
    const tenant = await newTenant(server);
    const created = await surface.create(tenant, userInput({ metadata }));
    expect(created.status).toBe(400);
    expect(created.error).toMatch(message);
    const userId = await createUser(server, tenant);
    const updated = await surface.update(tenant, userId, { metadata });
    expect(updated.status).toBe(400);
    expect(updated.error).toMatch(message);
  });

  it("accepts the limits exactly: 50 keys, 40-character keys, 500-character values (counted in characters)", async () => {
    const tenant = await newTenant(server);
    const metadata = { ...manyKeys(48), ["k".repeat(40)]: "x".repeat(500), emoji: "🙂".repeat(500) };
    const created = await surface.create(tenant, userInput({ metadata }));
    expect(created.status, created.error).toBe(201);
    expect(created.user!.metadata).toEqual(metadata);
  });

  it("refuses a __proto__ key (never dropped silently), and keeps other prototype names as ordinary keys", async () => {
    const tenant = await newTenant(server);
    const refused = await surface.create(tenant, userInput({ metadata: JSON.parse('{"__proto__": "x", "a": "b"}') }));
    expect(refused).toMatchObject({ status: 400, error: expect.stringMatching(/key "__proto__" is reserved/) });
    const created = await surface.create(tenant, userInput({ metadata: { constructor: "c", toFixed: "t", hasOwnProperty: "h" } }));
    expect(created.user!.metadata).toEqual({ constructor: "c", toFixed: "t", hasOwnProperty: "h" });
    const [event] = (await waitForEvents(server, tenant, 1, "&type=user.created")).filter((e) => e.data.object.id === created.user!.id);
    expect(event.data.object.metadata).toEqual({ constructor: "c", toFixed: "t", hasOwnProperty: "h" });
  });

  it("merges on update: sets, overwrites, removes keys set to \"\" or null, keeps the rest, and records user.updated", async () => {
    const tenant = await newTenant(server);
    const created = await surface.create(tenant, userInput({ metadata: { keep: "1", change: "old", dropEmpty: "x", dropNull: "y", tooManyKeys: "9" } }));
    const id = created.user!.id;
    const updated = await surface.update(tenant, id, { metadata: { change: "new", added: "2", dropEmpty: "", dropNull: null, neverThere: null } });
    expect(updated.status, updated.error).toBe(200);
    expect(updated.user!.metadata).toEqual({ keep: "1", change: "new", added: "2", tooManyKeys: "9" });
    expect((await rest(server, "GET", `/v1/user/${id}`, { headers: tenant.headers })).body.metadata).toEqual({ keep: "1", change: "new", added: "2", tooManyKeys: "9" });
    const [event] = await waitForEvents(server, tenant, 1, "&type=user.updated");
    expect(event.data.object).toMatchObject({ id, metadata: { keep: "1", change: "new", added: "2", tooManyKeys: "9" } });
  });

  it("applies the 50-key limit to the merged result", async () => {
    const tenant = await newTenant(server);
    const id = (await surface.create(tenant, userInput({ metadata: manyKeys(50) }))).user!.id;
    const over = await surface.update(tenant, id, { metadata: { k50: "one more" } });
    expect(over.status).toBe(400);
    expect(over.error).toMatch(/metadata: must have at most 50 keys once merged \(it would have 51\)/);
    const swapped = await surface.update(tenant, id, { metadata: { k50: "one more", k0: null } });
    expect(swapped.status, swapped.error).toBe(200);
    expect(Object.keys(swapped.user!.metadata)).toHaveLength(50);
  });

  it("sets, changes and removes the externalId on update", async () => {
    const tenant = await newTenant(server);
    const id = await createUser(server, tenant);
    expect((await surface.update(tenant, id, { externalId: "ext-a" })).user).toMatchObject({ externalId: "ext-a", metadata: {} });
    expect((await surface.update(tenant, id, { externalId: null })).user).toMatchObject({ externalId: null });
  });

  it("refuses an update that changes nothing, and a bad externalId, with 400", async () => {
    const tenant = await newTenant(server);
    const id = await createUser(server, tenant);
    expect(await surface.update(tenant, id, {})).toMatchObject({ status: 400, error: expect.stringMatching(/Nothing to update/) });
    for (const externalId of ["", "x".repeat(181), 42]) {
      expect(await surface.create(tenant, userInput({ externalId }))).toMatchObject({ status: 400, error: expect.stringMatching(/externalId/) });
      expect(await surface.update(tenant, id, { externalId })).toMatchObject({ status: 400, error: expect.stringMatching(/externalId/) });
    }
    expect((await surface.create(tenant, userInput({ externalId: "x".repeat(180) }))).status).toBe(201);
  });

  it("refuses a second user with the same externalId with 409 naming the existing user; another client may use it", async () => {
    const tenant = await newTenant(server);
    const first = await surface.create(tenant, userInput({ externalId: "dup" }));
    const second = await surface.create(tenant, userInput({ externalId: "dup" }));
    expect(second).toMatchObject({ status: 409, code: "CONFLICT", details: { id: first.user!.id } });
    expect(second.error).toMatch(/externalId/);
    const other = await createUser(server, tenant);
    expect(await surface.update(tenant, other, { externalId: "dup" })).toMatchObject({ status: 409, details: { id: first.user!.id } });
    expect((await surface.create(await newTenant(server), userInput({ externalId: "dup" }))).status).toBe(201);
  });

  it("answers 404 for another client's user, and changes nothing", async () => {
    const owner = await newTenant(server);
    const id = await createUser(server, owner, { metadata: { a: "1" } });
    const updated = await surface.update(await newTenant(server), id, { metadata: { a: "stolen" }, externalId: "x" });
    expect(updated.status).toBe(404);
    expect((await rest(server, "GET", `/v1/user/${id}`, { headers: owner.headers })).body).toMatchObject({ metadata: { a: "1" }, externalId: null });
  });
});

describe("REST details", () => {
  it("answers the 409 as {error, details: {id}}", async () => {
    const tenant = await newTenant(server);
    const id = await createUser(server, tenant, { externalId: "same" });
    const res = await rest(server, "POST", "/v1/user", { headers: tenant.headers, body: userInput({ externalId: "same" }) });
    expect(res.status).toBe(409);
    expect(contractBody(res.body)).toEqual({ error: "A user with this externalId already exists", details: { id } });
  });

  it.each([
    ["a user id that is not a UUID", "/v1/user/12345", 400],
    ["an unknown user", `/v1/user/${crypto.randomUUID()}`, 404],
  ])("PATCH for %s answers %d", async (_case, path, status) => {
    const tenant = await newTenant(server);
    expect((await rest(server, "PATCH", path, { headers: tenant.headers, body: { metadata: { a: "b" } } })).status).toBe(status);
  });

  it("PATCH without credentials answers 401", async () => {
    const id = await createUser(server, await newTenant(server));
    expect((await rest(server, "PATCH", `/v1/user/${id}`, { body: { metadata: { a: "b" } } })).status).toBe(401);
  });
});

describe("list filters", () => {
  /** Three users of one tenant, and a look-alike in another tenant that must never be found. */
  async function population() {
    const tenant = await newTenant(server);
    const ids = {
      goldEu: await createUser(server, tenant, { externalId: "e-1", metadata: { segment: "gold", region: "eu" } }),
      goldUs: await createUser(server, tenant, { externalId: "e-2", metadata: { segment: "gold", region: "us" } }),
      silver: await createUser(server, tenant, { metadata: { segment: "silver", region: "eu" } }),
    };
    await createUser(server, await newTenant(server), { externalId: "e-1", metadata: { segment: "gold", region: "eu" } });
    return { tenant, ids };
  }
  const listIds = async (tenant: Tenant, query: string) => {
    const res = await rest(server, "GET", `/v1/user?${query}`, { headers: tenant.headers });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.map((user: { id: string }) => user.id);
  };
  const graphqlIds = async (tenant: Tenant, variables: Record<string, unknown>) => {
    const res = await gql(server, USERS, variables, tenant.headers);
    expect(res.body.errors).toBeUndefined();
    return res.body.data.users.map((user: { id: string }) => user.id);
  };

  it("filter by externalId and by metadata pairs (AND), within the client only, on both surfaces", async () => {
    const { tenant, ids } = await population();
    expect(await listIds(tenant, "externalId=e-1")).toEqual([ids.goldEu]);
    expect(await listIds(tenant, "externalId=nobody")).toEqual([]);
    expect(await listIds(tenant, "metadata[segment]=gold")).toEqual([ids.goldEu, ids.goldUs]);
    expect(await listIds(tenant, "metadata[segment]=gold&metadata[region]=eu")).toEqual([ids.goldEu]);
    expect(await listIds(tenant, "metadata[region]=eu")).toEqual([ids.goldEu, ids.silver]);
    expect(await listIds(tenant, "metadata[segment]=gold&externalId=e-2")).toEqual([ids.goldUs]);
    expect(await listIds(tenant, "metadata[segment]=gold&externalId=e-1&metadata[region]=us")).toEqual([]);
    expect(await listIds(tenant, "metadata[segment]=gold&limit=1&page=2")).toEqual([ids.goldUs]);
    expect(await listIds(tenant, `metadata%5Bsegment%5D=gold`)).toEqual([ids.goldEu, ids.goldUs]);
    expect(await graphqlIds(tenant, { externalId: "e-1" })).toEqual([ids.goldEu]);
    expect(await graphqlIds(tenant, { metadata: { segment: "gold", region: "eu" } })).toEqual([ids.goldEu]);
    expect(await graphqlIds(tenant, { metadata: { segment: "gold" }, limit: 1 })).toEqual([ids.goldEu]);
  });

  it.each([
    ["metadata=gold", /metadata: must be key-value pairs/],
    ["metadata[]=gold", /key "" must be 1 to 40 characters/],
    ["metadata[a][b]=gold", /key "a\]\[b" must not contain/],
    ["metadata[segment=gold", /metadata: must be key-value pairs/],
    ["metadata[segment]=gold&metadata[segment]=silver", /value of "segment" must be a string/],
    ["metadata[segment]=", /value of "segment" must not be empty/],
    [`metadata[${"k".repeat(41)}]=x`, /must be 1 to 40 characters/],
    [`metadata[note]=${"x".repeat(501)}`, /at most 500 characters/],
    ["externalId=", /externalId must be 1 to 180 characters/],
    ["externalId=a&externalId=b", /externalId/],
  ])("refuses %s with 400", async (query, message) => {
    const tenant = await newTenant(server);
    const res = await rest(server, "GET", `/v1/user?${query}`, { headers: tenant.headers });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(message);
  });

  it.each([
    [{ metadata: "gold" }, /metadata: must be key-value pairs/],
    [{ metadata: {} }, /metadata: must be key-value pairs/],
    [{ metadata: { segment: 1 } }, /value of "segment" must be a string/],
    [{ externalId: "" }, /externalId must be 1 to 180 characters/],
  ])("GraphQL refuses users(%j) with BAD_USER_INPUT", async (variables, message) => {
    const res = await gql(server, USERS, variables, (await newTenant(server)).headers);
    expect(res.body.errors?.[0]).toMatchObject({ message: expect.stringMatching(message), extensions: { code: "BAD_USER_INPUT" } });
  });
});

describe("on PostgreSQL", needs(REQUIREMENTS.postgres), () => {
  it("of 12 parallel creates with one externalId, exactly one succeeds and the others are 409 naming it", async () => {
    const tenant = await newTenant(server);
    const results = await Promise.all(
      Array.from({ length: 12 }, () => rest(server, "POST", "/v1/user", { headers: tenant.headers, body: userInput({ externalId: "racy" }) })),
    );
    expect(statusCounts(results)).toEqual({ 201: 1, 409: 11 });
    const winner = results.find((res) => res.status === 201)!.body.id;
    for (const res of results.filter((r) => r.status === 409)) expect(res.body.details).toEqual({ id: winner });
    const listed = await rest(server, "GET", "/v1/user?externalId=racy", { headers: tenant.headers });
    expect(listed.body.map((user: { id: string }) => user.id)).toEqual([winner]);
  });

  it("parallel updates of one user's metadata all apply (the row is locked for the merge)", async () => {
    const tenant = await newTenant(server);
    const id = await createUser(server, tenant);
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => rest(server, "PATCH", `/v1/user/${id}`, { headers: tenant.headers, body: { metadata: { [`k${i}`]: "v" } } })),
    );
    expect(statusCounts(results)).toEqual({ 200: 10 });
    expect((await rest(server, "GET", `/v1/user/${id}`, { headers: tenant.headers })).body.metadata).toEqual(manyKeys(10));
  });

  it("serves the metadata filter with the GIN index and the externalId filter with the unique index", async () => {
    const db = new pg.Client({ connectionString: testDatabaseUrl });
    await db.connect();
    try {
      // A session's own copy of the table with the same indexes, which the query's "users" names in this
      // session (temporary tables come first on the search path): no long transaction holds back other
      // tests' event feeds, and the plans are those of the indexes the migrations made.
      await db.query(`CREATE TEMPORARY TABLE "users" (LIKE "users" INCLUDING DEFAULTS INCLUDING INDEXES)`);
      // A client with 5,000 users, of which 2 hold the pair, as the planner's statistics see them.
      const clientId = crypto.randomUUID();
      await db.query(
        `INSERT INTO "users" ("id", "clientId", "email", "firstName", "lastName", "phoneNumber", "dob", "externalId", "metadata", "updatedAt")
         SELECT gen_random_uuid(), $1, 'u' || n || '@example.com', 'A', 'B', '+14155552671', '1990-01-01', 'ext-' || n,
           CASE WHEN n % 2000 = 0 THEN '{"segment": "rare"}'::jsonb ELSE jsonb_build_object('segment', 'common', 'n', n::text) END, now()
         FROM generate_series(1, 5000) AS n`,
        [clientId],
      );
      await db.query(`ANALYZE "users"`);
      const plan = async (filters: Parameters<typeof filteredUserIdsQuery>[1]) => {
        const { text, values } = filteredUserIdsQuery(clientId, filters, { limit: 10, offset: 0 });
        const rows = (await db.query(`EXPLAIN ${text}`, values)).rows as { "QUERY PLAN": string }[];
        return rows.map((row) => row["QUERY PLAN"]).join("\n");
      };
      expect(await plan({ metadata: { segment: "rare" } })).toMatch(/Bitmap Index Scan on users_metadata_idx/);
      expect(await plan({ externalId: "ext-42" })).toMatch(/Index Scan using "?users_clientId_externalId_\w+"?/);
    } finally {
      await db.end();
    }
  });
});
