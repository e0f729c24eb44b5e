import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { newTenant, startServer, testDatabaseUrl, type Tenant, type TestServer } from "./support/server.js";
import { needs, REQUIREMENTS } from "./support/requirements.js";
import { errorCodes, gql, rest, userInput } from "./support/http.js";
import { allEvents } from "./support/events.js";
import { subscribeSse, type Subscriber } from "./support/subscriptions.js";
import { connectWs } from "./support/pipeline.js";
import { AddressAllowlist, MAX_ALLOWED_IPS, normaliseAllowedIps } from "../src/caller/allowed-ips.js";
import { LAST_USED_RESOLUTION_MS } from "../src/keys/last-use.js";

/** The promise is a second; the margin is for a loaded test machine. */
const WITHIN_MS = 1500;
const hoursOf = (ms: number) => ms / 3_600_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const DEPOSIT_UPDATED = "subscription { depositUpdated { id status } }";

/** The servers that read X-Forwarded-For trust a loopback proxy (none is trusted by default). */
const TRUSTING_LOOPBACK = { TRUST_PROXY: "loopback" };

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ env: TRUSTING_LOOPBACK });
});
afterAll(() => server?.stop());

const openStreams: { close(): void }[] = [];
afterEach(() => openStreams.splice(0).forEach((stream) => stream.close()));

const createKey = (on: TestServer, tenant: Pick<Tenant, "headers">, body?: Record<string, unknown>, headers: Record<string, string> = {}) =>
  rest(on, "POST", "/v1/api-keys", { headers: { ...tenant.headers, ...headers }, body });
const rollKey = (on: TestServer, tenant: Pick<Tenant, "headers">, keyId: string, body?: Record<string, unknown>) =>
  rest(on, "POST", `/v1/api-keys/${keyId}/roll`, { headers: tenant.headers, body });
const listed = async (on: TestServer, tenant: Pick<Tenant, "headers">, keyId: string) =>
  (await rest(on, "GET", "/v1/api-keys", { headers: tenant.headers })).body.find((key: { id: string }) => key.id === keyId);
/** What a key may do right now, seen from `from` (sent as X-Forwarded-For: TRUST_PROXY is loopback here). */
const statusWith = async (on: TestServer, key: string, from?: string) =>
  (await rest(on, "GET", "/v1/api-keys", { headers: { "x-api-key": key, ...(from ? { "x-forwarded-for": from } : {}) } })).status;

/** A second key of a new tenant (the first one manages it). */
async function secondKey(on: TestServer, body?: Record<string, unknown>) {
  const tenant = await newTenant(on);
  const created = await createKey(on, tenant, body);
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return { tenant, id: created.body.id as string, key: created.body.key as string, body: created.body };
}

/** How long after `from` a stream ended (rejects if it is still open after `timeoutMs`). */
async function endedAfter(stream: { ended: Promise<unknown> }, from: number, timeoutMs = 8000) {
  const reason = await Promise.race([stream.ended, sleep(timeoutMs).then(() => Promise.reject(new Error(`still open ${timeoutMs} ms later`)))]);
  return { afterMs: Date.now() - from, reason };
}

function wsStream(on: TestServer, apiKey: string, headers?: Record<string, string>) {
  const connection = connectWs(on, { "x-api-key": apiKey }, { headers });
  openStreams.push({ close: () => void connection.dispose() });
  connection.client.subscribe({ query: DEPOSIT_UPDATED }, { next: () => {}, error: () => {}, complete: () => {} });
  return { connection, ended: connection.closed.then((code) => ({ code })) };
}

async function sseStream(on: TestServer, headers: Record<string, string>): Promise<Subscriber & { status: number }> {
  const subscriber = await subscribeSse(on.url, headers, DEPOSIT_UPDATED);
  openStreams.push(subscriber);
  return subscriber;
}

describe("allowlist entries, as RFC 4632 (CIDR) and RFC 4291 (IPv6, IPv4-mapped) define them", () => {
  it.each([
    { entries: ["203.0.113.7"], address: "203.0.113.7", allowed: true },
    { entries: ["203.0.113.7"], address: "203.0.113.8", allowed: false },
    { entries: ["203.0.113.0/24"], address: "203.0.113.255", allowed: true },
    { entries: ["203.0.113.0/24"], address: "203.0.114.0", allowed: false },
    { entries: ["10.0.0.0/8"], address: "10.255.255.255", allowed: true },
    { entries: ["0.0.0.0/0"], address: "198.51.100.1", allowed: true },
    { entries: ["0.0.0.0/0"], address: "2001:db8::1", allowed: false },
    { entries: ["2001:db8::/32"], address: "2001:db8:ffff::1", allowed: true },
    { entries: ["2001:db8::/32"], address: "2001:db9::1", allowed: false },
    { entries: ["2001:DB8:0:0::1"], address: "2001:db8::1", allowed: true },
    { entries: ["203.0.113.0/24"], address: "::ffff:203.0.113.9", allowed: true },
    { entries: ["::ffff:203.0.113.0/120"], address: "203.0.113.9", allowed: true },
    { entries: ["203.0.113.0/24"], address: "not an address", allowed: false },
  ])("$entries allows $address: $allowed", ({ entries, address, allowed }) => {
    expect(new AddressAllowlist(normaliseAllowedIps(entries)).allows(address)).toBe(allowed);
  });

  it("normalises entries (canonical text, a full-length prefix dropped, duplicates once)", () => {
    expect(normaliseAllowedIps(["2001:DB8:0:0::/32", "203.0.113.7/32", " 203.0.113.7 ", "::ffff:198.51.100.0/120"])).toEqual([
      "2001:db8::/32",
      "203.0.113.7",
      "198.51.100.0/24",
    ]);
  });

  it.each([
    { entry: "203.0.113.256", why: "an octet over 255" },
    { entry: "0x7f.1", why: "a non-decimal IPv4 form" },
    { entry: "127.1", why: "a shortened IPv4 form" },
    { entry: "203.0.113.0/33", why: "a prefix over 32" },
    { entry: "2001:db8::/129", why: "a prefix over 128" },
    { entry: "10.0.0.5/8", why: "host bits set" },
    { entry: "fe80::1%eth0", why: "an IPv6 zone" },
    { entry: "example.com", why: "a host name" },
    { entry: "203.0.113.0/24/1", why: "two prefixes" },
  ])("refuses $why ($entry), naming the entry", ({ entry }) => {
    expect(() => normaliseAllowedIps(["198.51.100.1", entry])).toThrow(`allowedIps[1]: ${JSON.stringify(entry)}`);
  });
});

describe("rolling a key", () => {
  it("REST: a new key (shown once) with the same allowlist; the old one works until its expiresAt, then 401; events show it", async () => {
    const { tenant, id, key } = await secondKey(server, { allowedIps: ["203.0.113.0/24"] });
    const from = "203.0.113.9";
    const before = Date.now();
    const rolled = await rollKey(server, tenant, id, { expiresInHours: hoursOf(2000) });
    expect(rolled.status, JSON.stringify(rolled.body)).toBe(200);
    expect(Object.keys(rolled.body).sort()).toEqual(["allowedIps", "createdAt", "expiresAt", "id", "key", "livemode", "mode", "name", "permissions", "prefix"]);
    expect(rolled.body).toMatchObject({ allowedIps: ["203.0.113.0/24"], expiresAt: null });
    expect(rolled.body.id).not.toBe(id);

    const old = await listed(server, tenant, id);
    const expiresAt = Date.parse(old.expiresAt);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 2000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 2000);
    expect(old.revokedAt).toBeNull();

    expect(await statusWith(server, key, from)).toBe(200);
    expect(await statusWith(server, rolled.body.key, from)).toBe(200);
    expect(await statusWith(server, rolled.body.key, "198.51.100.1")).toBe(403);
    await sleep(expiresAt - Date.now());
    expect(await statusWith(server, key, from)).toBe(401);
    expect(await statusWith(server, rolled.body.key, from)).toBe(200);
    // Listed as ended, still with its expiresAt.
    expect(await listed(server, tenant, id)).toMatchObject({ id, expiresAt: old.expiresAt, revokedAt: null });

    const events = await allEvents(server, tenant);
    expect(events.find((e) => e.type === "api_key.rolled")?.data.object).toMatchObject({ id, expiresAt: old.expiresAt, allowedIps: ["203.0.113.0/24"] });
    expect(events.filter((e) => e.type === "api_key.created").map((e) => e.data.object.id)).toContain(rolled.body.id);
  });

  it("GraphQL rollApiKey: by default the old key stops at once; the new one works", async () => {
    const { tenant, id, key } = await secondKey(server);
    const rolled = await gql(server, "mutation ($id: ID!) { rollApiKey(id: $id) { id key prefix expiresAt allowedIps } }", { id }, tenant.headers);
    expect(rolled.body.errors).toBeUndefined();
    const created = rolled.body.data.rollApiKey;
    expect(created).toMatchObject({ expiresAt: null, allowedIps: null });
    expect(await statusWith(server, key)).toBe(401);
    expect(await statusWith(server, created.key)).toBe(200);
    const old = (await gql(server, "{ apiKeys { id expiresAt lastUsedAt } }", {}, tenant.headers)).body.data.apiKeys.find((k: { id: string }) => k.id === id);
    expect(Date.parse(old.expiresAt)).toBeLessThanOrEqual(Date.now());
  });

  it("rolling an already expiring key is allowed and only brings its end forward", async () => {
    const { tenant, id, key } = await secondKey(server);
    expect((await rollKey(server, tenant, id, { expiresInHours: 1 })).status).toBe(200);
    const first = Date.parse((await listed(server, tenant, id)).expiresAt);
    const later = await rollKey(server, tenant, id, { expiresInHours: 24 });
    expect(later.status).toBe(200);
    expect(Date.parse((await listed(server, tenant, id)).expiresAt)).toBe(first);
    expect(await statusWith(server, key)).toBe(200);
    expect((await rollKey(server, tenant, id, { expiresInHours: 0 })).status).toBe(200);
    expect(await statusWith(server, key)).toBe(401);
    expect(await statusWith(server, later.body.key)).toBe(200);
  });

  it("concurrent rolls and a revocation of one key: each roll either makes a working successor or is refused 409 (PostgreSQL)", needs(REQUIREMENTS.postgres), async () => {
    const { tenant, id, key } = await secondKey(server);
    const [revoked, ...rolls] = await Promise.all([
      rest(server, "DELETE", `/v1/api-keys/${id}`, { headers: tenant.headers }),
      ...Array.from({ length: 4 }, () => rollKey(server, tenant, id, { expiresInHours: 1 })),
    ]);
    expect(revoked.status).toBe(200);
    expect(rolls.every((roll) => roll.status === 200 || roll.status === 409)).toBe(true);
    const successors = rolls.filter((roll) => roll.status === 200).map((roll) => roll.body);
    for (const successor of successors) expect(await statusWith(server, successor.key)).toBe(200);
    expect(await statusWith(server, key)).toBe(401);
    expect((await listed(server, tenant, id)).revokedAt).not.toBeNull();
    // The log's order is the commit order: every roll that succeeded committed before the revocation.
    const types = (await allEvents(server, tenant)).filter((e) => e.type !== "api_key.created" && e.data.object.id === id).map((e) => e.type);
    expect(types).toEqual([...successors.map(() => "api_key.rolled"), "api_key.revoked"]);
  });

  it.each([
    { expiresInHours: -1 },
    { expiresInHours: 168.01 },
    { expiresInHours: "24" },
  ])("refuses expiresInHours $expiresInHours (400 naming the field) on both surfaces, and the key is untouched", async ({ expiresInHours }) => {
    const { tenant, id, key } = await secondKey(server);
    const viaRest = await rollKey(server, tenant, id, { expiresInHours });
    expect(viaRest.status).toBe(400);
    expect(viaRest.body.error).toMatch(/expiresInHours/);
    const viaGraphql = await gql(server, "mutation ($id: ID!, $h: Float) { rollApiKey(id: $id, expiresInHours: $h) { id } }", { id, h: expiresInHours }, tenant.headers);
    expect(errorCodes(viaGraphql)).toEqual(["BAD_USER_INPUT"]);
    expect(viaGraphql.body.errors![0].message).toMatch(/expiresInHours|\$h/);
    expect(await listed(server, tenant, id)).toMatchObject({ expiresAt: null });
    expect(await statusWith(server, key)).toBe(200);
  });

  it("accepts the bounds 0 and 168 (a week, Stripe's limit)", async () => {
    const { tenant, id } = await secondKey(server);
    const before = Date.now();
    expect((await rollKey(server, tenant, id, { expiresInHours: 168 })).status).toBe(200);
    expect(Date.parse((await listed(server, tenant, id)).expiresAt) - before).toBeGreaterThanOrEqual(168 * 3_600_000);
  });

  it("answers another client's, an unknown, a revoked and an expired key as REST and GraphQL both say", async () => {
    const owner = await secondKey(server);
    const other = await newTenant(server);
    const revoked = await secondKey(server);
    expect((await rest(server, "DELETE", `/v1/api-keys/${revoked.id}`, { headers: revoked.tenant.headers })).status).toBe(200);
    const expired = await secondKey(server, { expiresInHours: hoursOf(300) });
    await sleep(400);
    const cases = [
      { what: "another client's key", tenant: other, id: owner.id, status: 404, code: "NOT_FOUND" },
      { what: "an unknown key", tenant: owner.tenant, id: crypto.randomUUID(), status: 404, code: "NOT_FOUND" },
      { what: "a revoked key", tenant: revoked.tenant, id: revoked.id, status: 409, code: "CONFLICT" },
      { what: "an expired key", tenant: expired.tenant, id: expired.id, status: 409, code: "CONFLICT" },
      { what: "a malformed id", tenant: owner.tenant, id: "nope", status: 400, code: "BAD_USER_INPUT" },
    ];
    for (const { what, tenant, id, status, code } of cases) {
      const viaRest = await rollKey(server, tenant, id);
      expect(viaRest.status, what).toBe(status);
      const viaGraphql = await gql(server, "mutation ($id: ID!) { rollApiKey(id: $id) { id } }", { id }, tenant.headers);
      expect(errorCodes(viaGraphql), what).toEqual([code]);
    }
    // The other client's attempt changed nothing.
    expect(await statusWith(server, owner.key)).toBe(200);
    expect(await listed(server, owner.tenant, owner.id)).toMatchObject({ expiresAt: null });
  });
});

describe("keys created to expire", () => {
  it("REST: works until expiresAt, refused after (401); GraphQL: createApiKey(input: {expiresInHours}) likewise", async () => {
    const tenant = await newTenant(server);
    const viaRest = await createKey(server, tenant, { expiresInHours: hoursOf(1500) });
    const viaGraphql = await gql(server, "mutation ($input: CreateApiKeyInput) { createApiKey(input: $input) { key expiresAt } }", { input: { expiresInHours: hoursOf(1500) } }, tenant.headers);
    expect(viaRest.status).toBe(200);
    expect(viaGraphql.body.errors).toBeUndefined();
    const keys = [viaRest.body, viaGraphql.body.data.createApiKey];
    for (const created of keys) {
      expect(Date.parse(created.expiresAt)).toBeGreaterThan(Date.now());
      expect(await statusWith(server, created.key)).toBe(200);
    }
    await sleep(Math.max(...keys.map((k) => Date.parse(k.expiresAt))) - Date.now());
    for (const created of keys) expect(await statusWith(server, created.key)).toBe(401);
  });

  it.each([{ expiresInHours: 0 }, { expiresInHours: -2 }, { expiresInHours: 8760.5 }, { expiresInHours: "1" }])(
    "refuses expiresInHours $expiresInHours on create (400 naming the field)",
    async ({ expiresInHours }) => {
      const tenant = await newTenant(server);
      const viaRest = await createKey(server, tenant, { expiresInHours });
      expect(viaRest.status).toBe(400);
      expect(viaRest.body.error).toMatch(/expiresInHours/);
      const viaGraphql = await gql(server, "mutation ($input: CreateApiKeyInput) { createApiKey(input: $input) { id } }", { input: { expiresInHours } }, tenant.headers);
      expect(errorCodes(viaGraphql)).toEqual(["BAD_USER_INPUT"]);
      expect(viaGraphql.body.errors![0].message).toMatch(/expiresInHours/);
    },
  );
});

describe("lastUsedAt", () => {
  it("is written after a use, and not again within a minute, however often the key is used", async () => {
    const { tenant, id, key } = await secondKey(server);
    expect((await listed(server, tenant, id)).lastUsedAt).toBeNull();
    const before = Date.now();
    expect(await statusWith(server, key)).toBe(200);
    await expect.poll(async () => (await listed(server, tenant, id)).lastUsedAt, { timeout: 5000 }).not.toBeNull();
    const first = (await listed(server, tenant, id)).lastUsedAt;
    expect(Date.parse(first)).toBeGreaterThanOrEqual(before - 5);
    // Past the credential cache's second, so each of these uses verifies the key against the database again.
    for (let i = 0; i < 2; i++) {
      await sleep(1100);
      expect(await statusWith(server, key)).toBe(200);
    }
    await sleep(1200);
    expect((await listed(server, tenant, id)).lastUsedAt).toBe(first);

    // A minute later (the stored time moved back instead of waiting), the next use is written again.
    const { prisma } = server.app.db;
    const aMinuteAgo = new Date(Date.parse(first) - LAST_USED_RESOLUTION_MS);
    await prisma.apiKey.update({ where: { id }, data: { lastUsedAt: aMinuteAgo } });
    await sleep(1100);
    expect(await statusWith(server, key)).toBe(200);
    await expect.poll(async () => Date.parse((await listed(server, tenant, id)).lastUsedAt), { timeout: 5000 }).toBeGreaterThan(Date.parse(first));
  });

  // The proof that no request waits for the write: the key's row is locked by another transaction,
  // which a write would wait for. PostgreSQL only (the embedded database runs one transaction at a time).
  it("never makes a request wait: with the key's row locked, requests are answered, and the write lands once it is released", needs(REQUIREMENTS.postgres), async () => {
    const { tenant, id, key } = await secondKey(server);
    const locker = new pg.Client({ connectionString: testDatabaseUrl });
    await locker.connect();
    try {
      await locker.query("BEGIN");
      await locker.query(`SELECT 1 FROM "api_keys" WHERE "id" = $1 FOR UPDATE`, [id]);
      const started = Date.now();
      expect(await statusWith(server, key)).toBe(200);
      await sleep(1100);
      expect(await statusWith(server, key)).toBe(200);
      expect(Date.now() - started).toBeLessThan(1100 + 1000);
      // The write has been attempted (after 1 s) and is waiting for the lock.
      await sleep(500);
      expect((await listed(server, tenant, id)).lastUsedAt).toBeNull();
      await locker.query("COMMIT");
    } finally {
      await locker.end();
    }
    await expect.poll(async () => (await listed(server, tenant, id)).lastUsedAt, { timeout: 5000 }).not.toBeNull();
  });
});

describe("IP allowlists", () => {
  const ALLOWED = "203.0.113.0/24";

  it("REST and GraphQL: an allowed address passes; any other is 403 FORBIDDEN before anything runs (nothing written)", async () => {
    const { tenant, key } = await secondKey(server, { allowedIps: [ALLOWED, "2001:db8::/32"] });
    const headers = (from: string) => ({ "x-api-key": key, "x-forwarded-for": from });
    for (const from of ["203.0.113.5", "2001:db8:1::7", "::ffff:203.0.113.200"]) {
      expect((await rest(server, "GET", "/v1/user", { headers: headers(from) })).status, from).toBe(200);
      expect((await gql(server, "{ me { id } }", {}, headers(from))).body.data?.me.id, from).toBe(tenant.clientId);
    }
    for (const from of ["198.51.100.1", "203.0.114.5", "2001:db9::1", "::ffff:198.51.100.1"]) {
      const viaRest = await rest(server, "POST", "/v1/user", { headers: headers(from), body: userInput() });
      expect(viaRest.status, from).toBe(403);
      expect(viaRest.body).toMatchObject({ error: "This API key may not be used from this address", code: "FORBIDDEN" });
      const viaGraphql = await gql(server, "mutation ($input: CreateUserInput!) { createUser(input: $input) { id } }", { input: userInput() }, headers(from));
      expect(viaGraphql.status, from).toBe(403);
      expect(errorCodes(viaGraphql)).toEqual(["FORBIDDEN"]);
    }
    expect(await server.app.db.prisma.user.count({ where: { clientId: tenant.clientId } })).toBe(0);
  });

  it("a refused request charges nothing to the client's rate limit", async () => {
    const limited = await startServer({ env: { ...TRUSTING_LOOPBACK, RATE_LIMIT_PER_MINUTE: "3" } });
    try {
      const { key } = await secondKey(limited, { allowedIps: [ALLOWED] });
      for (let i = 0; i < 5; i++) expect(await statusWith(limited, key, "198.51.100.1")).toBe(403);
      // The client's budget (3) is whole: only the key's own management request above has drawn on it.
      const allowed = [];
      for (let i = 0; i < 3; i++) allowed.push(await statusWith(limited, key, `203.0.113.${i + 1}`));
      expect(allowed).toEqual([200, 200, 429]);
    } finally {
      await limited.stop();
    }
  });

  it("without a trusted proxy (TRUST_PROXY=false) the connection's address decides, not X-Forwarded-For", async () => {
    const direct = await startServer({ env: { TRUST_PROXY: "false" } });
    try {
      const fromElsewhere = await secondKey(direct, { allowedIps: [ALLOWED] });
      expect(await statusWith(direct, fromElsewhere.key, "203.0.113.5")).toBe(403);
      const loopback = await secondKey(direct, { allowedIps: ["127.0.0.0/8", "::1"] });
      expect(await statusWith(direct, loopback.key, "198.51.100.1")).toBe(200);
    } finally {
      await direct.stop();
    }
  });

  it("websockets are checked at connection_init (closed 4403 from elsewhere), SSE at the request (403)", async () => {
    const { key } = await secondKey(server, { allowedIps: [ALLOWED] });
    const refused = wsStream(server, key, { "x-forwarded-for": "198.51.100.1" });
    expect((await endedAfter(refused, Date.now(), 5000)).reason).toEqual({ code: 4403 });
    const allowed = wsStream(server, key, { "x-forwarded-for": "203.0.113.5" });
    await expect(endedAfter(allowed, Date.now(), 1500)).rejects.toThrow(/still open/);
    expect((await allowed.connection.run({ query: "{ me { id } }" }))[0].errors).toBeUndefined();

    const refusedSse = await sseStream(server, { "x-api-key": key, "x-forwarded-for": "198.51.100.1" });
    expect(refusedSse.status).toBe(403);
    const allowedSse = await sseStream(server, { "x-api-key": key, "x-forwarded-for": "203.0.113.5" });
    expect(allowedSse.status).toBe(200);
  });

  it.each([
    { allowedIps: Array.from({ length: MAX_ALLOWED_IPS + 1 }, (_, i) => `203.0.113.${i}`), error: /at most 20/ },
    { allowedIps: ["203.0.113.0/24", "nope"], error: /allowedIps\[1\]: "nope"/ },
    { allowedIps: ["10.0.0.5/8"], error: /allowedIps\[0\].*host bits/ },
    { allowedIps: [], error: /at least one/ },
  ])("refuses allowedIps $error on create (400) on both surfaces; no key is made", async ({ allowedIps, error }) => {
    const tenant = await newTenant(server);
    const viaRest = await createKey(server, tenant, { allowedIps });
    expect(viaRest.status).toBe(400);
    expect(viaRest.body.error).toMatch(error);
    const viaGraphql = await gql(server, "mutation ($input: CreateApiKeyInput) { createApiKey(input: $input) { id } }", { input: { allowedIps } }, tenant.headers);
    expect(errorCodes(viaGraphql)).toEqual(["BAD_USER_INPUT"]);
    expect(viaGraphql.body.errors![0].message).toMatch(error);
    expect((await rest(server, "GET", "/v1/api-keys", { headers: tenant.headers })).body).toHaveLength(1);
  });

  it("allows exactly 20 entries, and lists them (null for an unrestricted key)", async () => {
    const allowedIps = Array.from({ length: MAX_ALLOWED_IPS }, (_, i) => `203.0.113.${i}`);
    const { tenant, id } = await secondKey(server, { allowedIps });
    expect((await listed(server, tenant, id)).allowedIps).toEqual(allowedIps);
    const first = (await rest(server, "GET", "/v1/api-keys", { headers: tenant.headers })).body[0];
    expect(first.allowedIps).toBeNull();
  });
});

// Two instances over one PostgreSQL: what one does to a key, the other honours.
describe("a rolled key across two instances", needs(REQUIREMENTS.postgres), () => {
  let other: TestServer;
  beforeAll(async () => {
    other = await startServer({ env: TRUSTING_LOOPBACK });
  });
  afterAll(() => other?.stop());

  it("works on both until its expiry and is refused on both within a second after; its streams end then; the new key works", async () => {
    const { tenant, id, key } = await secondKey(server);
    const instances = [server, other];
    // Both instances have verified (and cached) the key, and streams are open with it on both, over both transports.
    for (const instance of instances) expect(await statusWith(instance, key)).toBe(200);
    const before = [wsStream(other, key), wsStream(server, key)];
    const sse = await sseStream(other, { "x-api-key": key });
    expect(sse.status).toBe(200);
    await sleep(300);

    const rolled = await rollKey(server, tenant, id, { expiresInHours: hoursOf(3000) });
    expect(rolled.status).toBe(200);
    const expiresAt = Date.parse((await listed(server, tenant, id)).expiresAt);
    // A stream opened after the roll, on the other instance, knows the end from the start.
    const after = wsStream(other, key);
    while (Date.now() < expiresAt - 400) {
      for (const instance of instances) expect(await statusWith(instance, key)).toBe(200);
      await sleep(200);
    }
    const streams = [...before, after, sse];
    const ends = Promise.all(streams.map((stream) => endedAfter(stream, expiresAt)));

    // Neither instance trusts its cached verification past the key's expiresAt: the first request after it is refused.
    await sleep(expiresAt - Date.now() + 5);
    for (const instance of instances) expect(await statusWith(instance, key)).toBe(401);
    expect(Date.now() - expiresAt).toBeLessThan(WITHIN_MS);
    for (const { afterMs, reason } of await ends) {
      expect(afterMs).toBeGreaterThanOrEqual(-50);
      expect(afterMs).toBeLessThan(WITHIN_MS);
      if (reason) expect(reason).toEqual({ code: 4401 });
    }
    for (const instance of instances) expect(await statusWith(instance, rolled.body.key)).toBe(200);
  });

  it("an immediate roll (0 hours) on one instance is refused by the other at once, though it had the key cached", async () => {
    const { tenant, id, key } = await secondKey(server);
    expect(await statusWith(other, key)).toBe(200);
    const rolledAt = Date.now();
    expect((await rollKey(server, tenant, id)).status).toBe(200);
    let status = 200;
    while (status !== 401 && Date.now() - rolledAt < 3000) status = await statusWith(other, key);
    expect(status).toBe(401);
    expect(Date.now() - rolledAt).toBeLessThan(1100);
  });
});
