import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, newTenant, type Tenant, type TestServer } from "./support/server.js";
import { errorCodes, gql, rest, userInput, contractKeys, contractBody } from "./support/http.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

const USER_FIELDS = ["id", "createdAt", "updatedAt", "firstName", "lastName", "phoneNumber", "email", "clientId", "externalId", "metadata", "livemode"];
const postUser = (tenant: Tenant, body: unknown) => rest(server, "POST", "/v1/user", { headers: tenant.headers, body });

/** Creates users one after another; their ids in the list's order (oldest first, ties by id). */
async function createUsers(tenant: Tenant, count: number): Promise<string[]> {
  const users: { id: string; createdAt: string }[] = [];
  for (let i = 0; i < count; i++) users.push((await postUser(tenant, userInput())).body);
  return users.sort((x, y) => x.createdAt.localeCompare(y.createdAt) || x.id.localeCompare(y.id)).map((u) => u.id);
}

describe("POST /v1/user", () => {
  it("creates a user and answers 201 with the contract's fields", async () => {
    const tenant = await newTenant(server);
    const input = userInput({ email: "Grace@Example.COM" });
    const res = await postUser(tenant, input);
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(USER_FIELDS);
    expect(res.body.email).toBe("grace@example.com");
    expect(res.body.clientId).toBe(tenant.clientId);
    expect(res.body.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(res.body).toMatchObject({ firstName: input.firstName, lastName: input.lastName, phoneNumber: input.phoneNumber });
  });

  it("answers 400 {error} when the email is taken in the same tenant, whatever its case", async () => {
    const tenant = await newTenant(server);
    const email = `taken-${crypto.randomUUID()}@example.com`;
    expect((await postUser(tenant, userInput({ email }))).status).toBe(201);
    const res = await postUser(tenant, userInput({ email: email.toUpperCase() }));
    expect(res.status).toBe(400);
    expect(contractKeys(res.body)).toEqual(["error"]);
  });

  it("lets another tenant use the same email", async () => {
    const email = `shared-${crypto.randomUUID()}@example.com`;
    expect((await postUser(await newTenant(server), userInput({ email }))).status).toBe(201);
    expect((await postUser(await newTenant(server), userInput({ email }))).status).toBe(201);
  });

  it.each([
    ["email", { email: "not-an-email" }],
    ["phoneNumber", { phoneNumber: "4155552671" }],
    ["phoneNumber", { phoneNumber: "+1 415 555 2671" }],
    ["phoneNumber", { phoneNumber: "+999123" }],
    ["phoneNumber", { phoneNumber: "+442079460000" }], // a UK fixed line: valid E.164, not a mobile
    ["dob", { dob: "2999-01-01" }],
    ["dob", { dob: "2023-02-30" }],
    ["dob", { dob: "17/05/1990" }],
    ["dob", { dob: "1990-5-17" }],
    ["firstName", { firstName: "" }],
    ["firstName", { firstName: "   " }],
    ["lastName", { lastName: "x".repeat(101) }],
    ["firstName", { firstName: 5 }],
    ["dob", { dob: 19900517 }],
    ["email", { email: null }],
  ])("refuses a bad %s (%j) with 400 naming the field", async (field, override) => {
    const tenant = await newTenant(server);
    const res = await postUser(tenant, userInput(override));
    expect(res.status).toBe(400);
    expect(contractKeys(res.body)).toEqual(["error"]);
    expect(res.body.error).toContain(field);
  });

  it.each(["email", "firstName", "lastName", "phoneNumber", "dob"])("refuses a missing %s with 400 naming it", async (field) => {
    const tenant = await newTenant(server);
    const input: Record<string, unknown> = userInput();
    delete input[field];
    const res = await postUser(tenant, input);
    expect(res.status).toBe(400);
    expect(contractBody(res.body)).toEqual({ error: `${field} is required` });
  });

  it("accepts names of exactly 100 characters and a mobile number outside North America", async () => {
    const tenant = await newTenant(server);
    const res = await postUser(tenant, userInput({ firstName: "x".repeat(100), phoneNumber: "+447400123456" }));
    expect(res.status).toBe(201);
  });
});

describe("GET /v1/user", () => {
  it("lists 10 users by default, oldest first, and pages through the rest", async () => {
    const tenant = await newTenant(server);
    const ids = await createUsers(tenant, 12);
    const first = await rest(server, "GET", "/v1/user", { headers: tenant.headers });
    expect(first.status).toBe(200);
    expect(first.body.map((u: { id: string }) => u.id)).toEqual(ids.slice(0, 10));
    for (const user of first.body) expect(Object.keys(user)).toEqual(USER_FIELDS);
    const second = await rest(server, "GET", "/v1/user?page=2", { headers: tenant.headers });
    expect(second.body.map((u: { id: string }) => u.id)).toEqual(ids.slice(10));
    const small = await rest(server, "GET", "/v1/user?page=3&limit=5", { headers: tenant.headers });
    expect(small.body.map((u: { id: string }) => u.id)).toEqual(ids.slice(10, 12));
    expect((await rest(server, "GET", "/v1/user?page=9", { headers: tenant.headers })).body).toEqual([]);
  });

  it.each([["page=0"], ["page=-1"], ["page=abc"], ["page=1.5"], ["limit=0"], ["limit=101"], ["limit=abc"], ["page=1&page=2"]])(
    "refuses %s with 400 naming the parameter",
    async (query) => {
      const tenant = await newTenant(server);
      const res = await rest(server, "GET", `/v1/user?${query}`, { headers: tenant.headers });
      expect(res.status).toBe(400);
      expect(contractKeys(res.body)).toEqual(["error"]);
      expect(res.body.error).toContain(query.split("=")[0]);
    },
  );

  it("accepts limit=100", async () => {
    const tenant = await newTenant(server);
    expect((await rest(server, "GET", "/v1/user?limit=100", { headers: tenant.headers })).status).toBe(200);
  });
});

describe("GET /v1/user/{userId}", () => {
  it("answers 200 with the user", async () => {
    const tenant = await newTenant(server);
    const created = await postUser(tenant, userInput());
    const res = await rest(server, "GET", `/v1/user/${created.body.id}`, { headers: tenant.headers });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(created.body);
  });

  it("answers 404 {error} for an unknown user", async () => {
    const tenant = await newTenant(server);
    const res = await rest(server, "GET", `/v1/user/${crypto.randomUUID()}`, { headers: tenant.headers });
    expect(res.status).toBe(404);
    expect(contractKeys(res.body)).toEqual(["error"]);
  });

  it("answers 400 {error} for an id that is not a UUID", async () => {
    const tenant = await newTenant(server);
    const res = await rest(server, "GET", "/v1/user/12345", { headers: tenant.headers });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/userId/);
  });
});

describe("tenant isolation", () => {
  it("another tenant's user is exactly as unknown as a missing one, by id and in lists", async () => {
    const a = await newTenant(server);
    const b = await newTenant(server);
    const aUser = (await postUser(a, userInput())).body;
    const bUser = (await postUser(b, userInput())).body;
    const byId = await rest(server, "GET", `/v1/user/${aUser.id}`, { headers: b.headers });
    const unknown = await rest(server, "GET", `/v1/user/${crypto.randomUUID()}`, { headers: b.headers });
    expect(byId.status).toBe(404);
    expect(contractBody(byId.body)).toEqual(contractBody(unknown.body));
    expect((await rest(server, "GET", "/v1/user?limit=100", { headers: b.headers })).body).toEqual([bUser]);
    const viaGraphql = await gql(server, "query ($id: ID!) { user(id: $id) { id } users { id } }", { id: aUser.id }, b.headers);
    expect(errorCodes(viaGraphql)).toEqual(["NOT_FOUND"]);
  });
});

describe("users over GraphQL", () => {
  it("the REST and GraphQL answers for one user agree field by field", async () => {
    const tenant = await newTenant(server);
    const created = await postUser(tenant, userInput());
    const viaGraphql = await gql(server, `query ($id: ID!) { user(id: $id) { ${USER_FIELDS.join(" ")} } users { id } }`, { id: created.body.id }, tenant.headers);
    expect(viaGraphql.body.data.user).toEqual(created.body);
    expect(viaGraphql.body.data.users).toEqual([{ id: created.body.id }]);
  });

  it("createUser validates like REST and users refuses a bad limit", async () => {
    const tenant = await newTenant(server);
    const bad = await gql(
      server,
      "mutation ($input: CreateUserInput!) { createUser(input: $input) { id } }",
      { input: userInput({ phoneNumber: "+442079460000" }) },
      tenant.headers,
    );
    expect(errorCodes(bad)).toEqual(["BAD_USER_INPUT"]);
    expect(bad.body.errors![0].message).toContain("phoneNumber");
    expect(errorCodes(await gql(server, "{ users(limit: 101) { id } }", {}, tenant.headers))).toEqual(["BAD_USER_INPUT"]);
  });
});
