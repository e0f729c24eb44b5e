import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { routes, sandboxRoutes } from "../src/rest/routes/index.js";
import { createUser, rest } from "./support/http.js";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

/** One request written on a socket as given (fetch cannot send an absolute-form target); the whole answer. */
function rawRequest(text: string): Promise<string> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(text));
    let answer = "";
    socket.on("data", (chunk) => (answer += chunk.toString()));
    socket.on("end", () => resolve(answer));
    socket.on("error", reject);
  });
}

/** A tenant with one user, and that user's id. */
async function tenantWithUser(): Promise<{ tenant: Tenant; userId: string }> {
  const tenant = await newTenant(server);
  return { tenant, userId: await createUser(server, tenant) };
}

describe("the /v1 table is served by Express", () => {
  it("has the Express app as the server's only request listener, and each route of the table as a route of its /v1 router", () => {
    const { http, httpServer } = server.app;
    expect(httpServer.listeners("request")).toEqual([http]);
    type Layer = { handle: { stack?: Layer[] }; route?: { path: string; methods: Record<string, boolean> } };
    const routers = (http as unknown as { router: { stack: Layer[] } }).router.stack.filter((layer) => layer.handle.stack?.every((inner) => inner.route));
    const mounted = routers.find((layer) => layer.handle.stack!.length >= routes.length);
    const served = (mounted?.handle.stack ?? []).map(({ route }) => `${Object.keys(route!.methods).filter((m) => m !== "_all" && m !== "head").join()} /v1${route!.path}`);
    const table = [...routes, ...sandboxRoutes].map((route) => `${route.method.toLowerCase()} ${route.path}`);
    expect(served).toEqual(table);
  });
});

describe("the /v1 table matches paths as Express does", () => {
  it.each([
    ["as written", (id: string) => `/v1/user/${id}`],
    ["in another case (the id kept as given)", (id: string) => `/V1/User/${id}`],
    ["with a trailing slash", (id: string) => `/v1/user/${id}/`],
    ["with an empty query string", (id: string) => `/v1/user/${id}?`],
  ])("a path %s reaches its route", async (_case, path) => {
    const { tenant, userId } = await tenantWithUser();
    const res = await rest(server, "GET", path(userId), { headers: tenant.headers });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.id).toBe(userId);
  });

  it("answers HEAD on a GET route with GET's status and headers, and no body", async () => {
    const { tenant, userId } = await tenantWithUser();
    const get = await fetch(`${server.url}/v1/user/${userId}`, { headers: tenant.headers });
    const head = await fetch(`${server.url}/v1/user/${userId}`, { method: "HEAD", headers: tenant.headers });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toBe(get.headers.get("content-type"));
    expect(head.headers.get("content-length")).toBe(get.headers.get("content-length"));
    expect(await head.text()).toBe("");
  });

  it("hands an id of any length to the operation, which refuses it (not a missing route)", async () => {
    const tenant = await newTenant(server);
    const res = await rest(server, "GET", `/v1/user/${"a".repeat(500)}`, { headers: tenant.headers });
    expect(res.body.error).not.toBe("No such route");
    expect([400, 404]).toContain(res.status);
  });

  it("prefers a static segment to a parameter, as the table's order did", async () => {
    const { tenant, userId } = await tenantWithUser();
    // `/v1/accounts/usdc/:userId` (the USDC account) is listed before `/v1/accounts/:currency/:userId` (a balance).
    const usdc = await rest(server, "GET", `/v1/accounts/usdc/${userId}`, { headers: tenant.headers });
    const balance = await rest(server, "GET", `/v1/accounts/ngn/${userId}`, { headers: tenant.headers });
    expect(Object.keys(usdc.body)).not.toEqual(Object.keys(balance.body));
    expect(balance.status, JSON.stringify(balance.body)).toBe(200);
  });

  it.each([
    ["an unknown path", "GET", "/v1/nothing-here"],
    ["a method the path does not take", "PUT", "/v1/user"],
    ["a path one segment too long", "GET", "/v1/user/a/b"],
    ["a static segment percent-encoded (%75ser)", "GET", "/v1/%75ser"],
    ["a static segment in a look-alike letter (the Kelvin sign)", "GET", "/v1/api-%E2%84%AAeys"],
    ["an empty parameter", "GET", "/v1/user//"],
  ])("answers %s with the JSON 404", async (_case, method, path) => {
    const tenant = await newTenant(server);
    const res = await rest(server, method, path, { headers: tenant.headers });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ error: "No such route", code: "NOT_FOUND" });
  });

  it("logs only the path of an absolute-form request target, never its user part or query", async () => {
    const tenant = await newTenant(server);
    const requestId = `absolute-${crypto.randomUUID()}`;
    const { host } = new URL(server.url);
    const answer = await rawRequest(
      `GET http://someone:hunter2@${host}/v1/user?externalId=secret-query HTTP/1.1\r\nHost: ${host}\r\nx-api-key: ${tenant.apiKey}\r\nx-request-id: ${requestId}\r\nConnection: close\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    await expect.poll(() => server.logs.filter((line) => line.includes(requestId)).length).toBe(1);
    const line = server.logs.find((entry) => entry.includes(requestId))!;
    expect(JSON.parse(line).req).toEqual({ method: "GET", path: "/v1/user" });
    expect(line).not.toMatch(/hunter2|secret-query/);
  });

  it("writes one access-log line naming the route pattern and the client, never the URL's id", async () => {
    const { tenant, userId } = await tenantWithUser();
    const requestId = `routing-${crypto.randomUUID()}`;
    await rest(server, "GET", `/v1/user/${userId}`, { headers: { ...tenant.headers, "x-request-id": requestId } });
    await expect.poll(() => server.logs.filter((line) => line.includes(requestId)).length).toBe(1);
    const line = JSON.parse(server.logs.find((entry) => entry.includes(requestId))!);
    expect(line).toMatchObject({ msg: "request completed", route: "/v1/user/:userId", clientId: tenant.clientId, res: { status: 200 } });
    expect(line.req).toEqual({ method: "GET", path: `/v1/user/${userId}` });
  });
});
