import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { request } from "node:http";
import WebSocket from "ws";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";
import { createUser, rest, type HttpResult } from "./support/http.js";
import { codesOf, connectWs, postGraphql, wsUrl, type WsConnection } from "./support/pipeline.js";

/** Three operations a minute per client (fifteen per IP, fifteen webhook calls per IP), two sign-ins per IP, two of each websocket resource. */
const PER_MINUTE = 3;
const PER_IP = PER_MINUTE * 5;
const LIMITED_ENV = {
  RATE_LIMIT_PER_MINUTE: String(PER_MINUTE),
  TRUST_PROXY: "loopback",
  SIGN_IN_RATE_LIMIT_PER_MINUTE: "2",
  WS_MAX_CONNECTIONS_PER_IP: "2",
  WS_MAX_CONNECTIONS_PER_CLIENT: "2",
  WS_MAX_OPERATIONS_PER_CONNECTION: "2",
};

let limited: TestServer;
let untrusting: TestServer;
// Two servers on the embedded database take a while to start on a busy machine.
beforeAll(async () => {
  limited = await startServer({ env: LIMITED_ENV });
  untrusting = await startServer({ env: { RATE_LIMIT_PER_MINUTE: String(PER_MINUTE), TRUST_PROXY: "false" } });
}, 120_000);
afterAll(() => Promise.all([limited, untrusting].map((server) => server?.stop())));

const connections: WsConnection[] = [];
const sockets: WebSocket[] = [];
afterEach(async () => {
  await Promise.all(connections.splice(0).map((connection) => connection.dispose()));
  sockets.splice(0).forEach((socket) => socket.terminate());
});

/** A caller address of its own for each use (TRUST_PROXY=loopback believes a loopback proxy's X-Forwarded-For). */
let lastAddress = 0;
const fromIp = () => ({ "x-forwarded-for": `203.0.113.${++lastAddress}` });

const DEPOSIT_UPDATED = "subscription { depositUpdated { id } }";

function expectLimited(res: HttpResult) {
  expect(res.status, JSON.stringify(res.body)).toBe(429);
  expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
}

function connect(server: TestServer, params: Record<string, unknown>, headers: Record<string, string>) {
  const connection = connectWs(server, params, { headers });
  connections.push(connection);
  return connection;
}

/** A raw websocket on the GraphQL path: resolves once open, or with the HTTP status the upgrade was refused with. */
function rawSocket(server: TestServer, headers: Record<string, string>): Promise<{ socket: WebSocket; refusedWith?: number }> {
  const socket = new WebSocket(wsUrl(server), "graphql-transport-ws", { headers });
  sockets.push(socket);
  return new Promise((resolve, reject) => {
    socket.once("open", () => resolve({ socket }));
    socket.once("unexpected-response", (_req, res) => resolve({ socket, refusedWith: res.statusCode }));
    socket.once("error", reject);
  });
}

/** An SSE subscription over a plain socket, so that hanging up really closes the connection. */
function openSse(server: TestServer, headers: Record<string, string>): Promise<{ status: number; hangUp(): void }> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}/graphql`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json", accept: "text/event-stream" },
    });
    req.once("response", (res) => resolve({ status: res.statusCode ?? 0, hangUp: () => req.destroy() }));
    req.once("error", reject);
    req.end(JSON.stringify({ query: "subscription { depositUpdated { id } }" }));
  });
}

const closeCodeOf = (socket: WebSocket) => new Promise<number>((resolve) => socket.once("close", (code) => resolve(code)));

describe("websocket limits", () => {
  it("refuses a frame over 100 kB before connection_init by closing the connection (1009)", async () => {
    const consoleErrors = vi.spyOn(console, "error");
    const { socket } = await rawSocket(limited, fromIp());
    const closed = closeCodeOf(socket);
    socket.send("x".repeat(150 * 1024));
    expect(await closed).toBe(1009);
    // Said once in the server's own log, not as a stack trace on the console.
    await expect.poll(() => limited.logs.some((line) => line.includes("Max payload size exceeded"))).toBe(true);
    expect(consoleErrors).not.toHaveBeenCalled();
    consoleErrors.mockRestore();
  });

  it("refuses a third upgrade from one address (WS_MAX_CONNECTIONS_PER_IP=2)", async () => {
    const ip = fromIp();
    expect((await rawSocket(limited, ip)).refusedWith).toBeUndefined();
    expect((await rawSocket(limited, ip)).refusedWith).toBeUndefined();
    expect((await rawSocket(limited, ip)).refusedWith).toBe(429);
    expect((await rawSocket(limited, fromIp())).refusedWith).toBeUndefined();
  });

  it("closes a client's third connection with 4429 (WS_MAX_CONNECTIONS_PER_CLIENT=2), each from its own address", async () => {
    const tenant = await newTenant(limited);
    const params = { "x-api-key": tenant.apiKey };
    const [first, second] = [connect(limited, params, fromIp()), connect(limited, params, fromIp())];
    await Promise.all([first.run({ query: "{ __typename }" }), second.run({ query: "{ __typename }" })]);
    const third = connect(limited, params, fromIp());
    expect(await third.closed).toBe(4429);
  });

  it("counts SSE streams against the same caps as websockets: a third from one address is 429, and one that hangs up makes room", async () => {
    const tenant = await newTenant(limited);
    const ip = fromIp();
    const [first, second] = [await openSse(limited, { ...tenant.headers, ...ip }), await openSse(limited, { ...tenant.headers, ...ip })];
    expect([first.status, second.status]).toEqual([200, 200]);
    const third = await openSse(limited, { ...tenant.headers, ...ip });
    expect(third.status).toBe(429);
    third.hangUp();
    expect((await rawSocket(limited, ip)).refusedWith).toBe(429);
    first.hangUp();
    // Another client from the address (this one has used its operations for the minute).
    const other = await newTenant(limited);
    await expect.poll(async () => {
      const again = await openSse(limited, { ...other.headers, ...ip });
      again.hangUp();
      return again.status;
    }).toBe(200);
    second.hangUp();
  });

  it("refuses a third concurrent operation on one connection (WS_MAX_OPERATIONS_PER_CONNECTION=2)", async () => {
    const tenant = await newTenant(limited);
    const connection = connect(limited, { "x-api-key": tenant.apiKey }, fromIp());
    const refusals: unknown[] = [];
    for (let i = 0; i < 2; i++) connection.client.subscribe({ query: DEPOSIT_UPDATED }, { next: () => {}, error: (e) => refusals.push(e), complete: () => {} });
    const [third] = await connection.run({ query: DEPOSIT_UPDATED });
    expect(codesOf(third)).toEqual(["RATE_LIMITED"]);
    expect(refusals).toEqual([]);
  });

  it("rate-limits operations over the websocket like over HTTP", async () => {
    const tenant = await newTenant(limited);
    const connection = connect(limited, { "x-api-key": tenant.apiKey }, fromIp());
    const codes = [];
    for (let i = 0; i <= PER_MINUTE; i++) codes.push(codesOf((await connection.run({ query: "{ me { id } }" }))[0]));
    expect(codes).toEqual([[], [], [], ["RATE_LIMITED"]]);
  });
});

describe("rate limits keyed on the authenticated client", () => {
  const get = (headers: Record<string, string>) => rest(limited, "GET", "/v1/user", { headers: { ...headers, ...fromIp() } });

  it.each([
    { how: "an empty x-client-auth beside the key, after the key's budget is spent", before: (t: Tenant) => t.headers, last: (t: Tenant) => ({ ...t.headers, "x-client-auth": "" }) },
    { how: "an empty x-client-auth beside the key on every request", before: (t: Tenant) => ({ ...t.headers, "x-client-auth": "" }), last: (t: Tenant) => ({ ...t.headers, "x-client-auth": "" }) },
  ])("$how does not skip the client's budget", async ({ before, last }) => {
    const tenant = await newTenant(limited);
    for (let i = 0; i < PER_MINUTE; i++) expect((await get(before(tenant))).status).toBe(200);
    expectLimited(await get(last(tenant)));
  });

  it("two keys of one client share one budget", async () => {
    const tenant = await newTenant(limited);
    const created = await rest(limited, "POST", "/v1/api-keys", { headers: { ...tenant.headers, ...fromIp() } });
    expect(created.status).toBe(200);
    const second = { "x-api-key": created.body.key as string };
    expect((await get(tenant.headers)).status).toBe(200);
    expect((await get(second)).status).toBe(200);
    expectLimited(await get(second));
    expectLimited(await get(tenant.headers));
  });
});

describe("per-address limits", () => {
  it.each([
    { surface: "REST /v1/client-auth/otp", request: (headers: Record<string, string>) => rest(limited, "POST", "/v1/client-auth/otp", { headers, body: { email: `ip-${crypto.randomUUID()}@example.com` } }) },
    {
      surface: "GraphQL requestOtp",
      request: (headers: Record<string, string>) => postGraphql(limited, "json", `mutation { requestOtp(email: "ip-${crypto.randomUUID()}@example.com") { message } }`, { headers }),
    },
  ])("sign-in over $surface is limited per address (SIGN_IN_RATE_LIMIT_PER_MINUTE=2), whatever the e-mail", async ({ request }) => {
    const ip = fromIp();
    expect((await request(ip)).status).toBe(200);
    expect((await request(ip)).status).toBe(200);
    expectLimited(await request(ip));
    expect((await request(fromIp())).status).toBe(200);
  });

  it("a credential does not exempt a sign-in from its per-address budget (GraphQL over HTTP admits by credential before parsing)", async () => {
    const tenant = await newTenant(limited);
    const ip = fromIp();
    const request = () =>
      postGraphql(limited, "json", `mutation { requestOtp(email: "ip-${crypto.randomUUID()}@example.com") { message } }`, { headers: { ...tenant.headers, ...ip } });
    expect((await request()).status).toBe(200);
    expect((await request()).status).toBe(200);
    expectLimited(await request());
  });

  it("provider webhooks are limited per address", async () => {
    const ip = fromIp();
    const post = (headers: Record<string, string>) =>
      rest(limited, "POST", "/v1/webhooks/sandbox-ngn", { headers: { ...headers, "x-webhook-signature": "t=1,v1=00" }, rawBody: "{}" });
    const statuses = [];
    for (let i = 0; i < PER_IP; i++) statuses.push((await post(ip)).status);
    // A bad signature is refused on its own merits (a 4xx other than 429) while the address is within its budget.
    expect(statuses.filter((status) => status < 400 || status >= 500 || status === 429)).toEqual([]);
    expectLimited(await post(ip));
    expect((await post(fromIp())).status).not.toBe(429);
  });

  it.each([
    { setting: "TRUST_PROXY=false: X-Forwarded-For is ignored, every request shares the loopback address's budget", server: () => untrusting, limitedAfter: PER_IP },
    { setting: "the default trusts a loopback proxy: each forwarded address has its own budget", server: () => limited, limitedAfter: undefined },
  ])("$setting", async ({ server, limitedAfter }) => {
    const statuses = [];
    for (let i = 0; i <= PER_IP; i++) statuses.push((await rest(server(), "GET", "/v1/user", { headers: fromIp() })).status);
    const firstLimited = statuses.indexOf(429);
    expect(firstLimited === -1 ? undefined : firstLimited).toBe(limitedAfter);
  });
});

describe("query cost and shape", () => {
  /** Each test stays within the client's three operations, from an address of its own. */
  const tenantWithUser = async () => {
    const tenant = await newTenant(limited);
    const headers = { ...tenant.headers, ...fromIp() };
    return { tenant: { headers }, userId: await createUser(limited, { headers }) };
  };

  it("multiplies by list sizes: 19 aliases of users(limit: 100) { ledgerPage(limit: 1000) } are refused 400 before running", async () => {
    const { tenant } = await tenantWithUser();
    const aliases = Array.from({ length: 19 }, (_, i) => `a${i}: users(limit: 100) { ledgerPage(limit: 1000) { id } }`).join(" ");
    const res = await postGraphql(limited, "json", `{ ${aliases} }`, { headers: tenant.headers });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(codesOf(res.body)).toEqual(["BAD_USER_INPUT"]);
    expect(res.body.data).toBeUndefined();
  });

  it("counts a connection's first as the size of its edges: users(limit: 100) { ledger(first: 1000) } is refused 400", async () => {
    const { tenant } = await tenantWithUser();
    const res = await postGraphql(limited, "json", `{ users(limit: 100) { ledger(first: 1000) { edges { node { id } } } } }`, { headers: tenant.headers });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(codesOf(res.body)).toEqual(["BAD_USER_INPUT"]);
  });

  it("counts a page object's size: 20 aliases of transactionsPage(limit: 1000) { transactions { id } } are refused 400 before running", async () => {
    const { tenant } = await tenantWithUser();
    const aliases = Array.from({ length: 20 }, (_, i) => `a${i}: transactionsPage(limit: 1000) { transactions { id } }`).join(" ");
    const res = await postGraphql(limited, "json", `{ ${aliases} }`, { headers: tenant.headers });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.errors?.[0]?.message).toMatch(/^Query cost 20020 exceeds 5000/);
    expect(res.body.data).toBeUndefined();
  });

  it("runs one user's ledgerPage(limit: 1000) and ledger(first: 1000)", async () => {
    const { tenant, userId } = await tenantWithUser();
    const query = `{ user(id: "${userId}") { ledgerPage(limit: 1000) { id } ledger(first: 1000) { totalCount edges { node { id } } } } }`;
    const res = await postGraphql(limited, "json", query, { headers: tenant.headers });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.user).toEqual({ ledgerPage: [], ledger: { totalCount: 0, edges: [] } });
  });

  it("refuses ledgerVerification inside a list (400), and answers it for one user", async () => {
    const { tenant, userId } = await tenantWithUser();
    const inList = await postGraphql(limited, "json", "{ users { ledgerVerification { valid } } }", { headers: tenant.headers });
    expect(inList.status, JSON.stringify(inList.body)).toBe(400);
    expect(codesOf(inList.body)).toEqual(["BAD_USER_INPUT"]);
    const single = await postGraphql(limited, "json", `{ user(id: "${userId}") { ledgerVerification { valid } } }`, { headers: tenant.headers });
    expect(single.status, JSON.stringify(single.body)).toBe(200);
    expect(single.body.data.user.ledgerVerification).toEqual({ valid: true });
  });

  it("answers an introspection query 12 levels deep through __type (code generators ask for type refs that deep)", async () => {
    const tenant = { headers: { ...(await newTenant(limited)).headers, ...fromIp() } };
    const typeRef = (depth: number): string => (depth === 0 ? "name" : `name kind ofType { ${typeRef(depth - 1)} }`);
    const query = `{ __type(name: "Query") { fields { type { ${typeRef(9)} } } } }`;
    const res = await postGraphql(limited, "json", query, { headers: tenant.headers });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.__type.fields.length).toBeGreaterThan(0);
  });
});
