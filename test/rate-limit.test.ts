import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newTenant, startServer, type TestServer } from "./support/server.js";
import { needs, REQUIREMENTS } from "./support/requirements.js";
import { gql, rest, type HttpResult, contractKeys } from "./support/http.js";
import { connectWs } from "./support/pipeline.js";
import { TOO_MANY_CONNECTIONS } from "../src/gateway/websocket.js";

/** Three requests a minute per credential, so fifteen per IP: small enough to reach in a test. */
const PER_MINUTE = 3;
const PER_IP = PER_MINUTE * 5;

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ env: { RATE_LIMIT_PER_MINUTE: String(PER_MINUTE), TRUST_PROXY: "loopback" } });
});
afterAll(() => server?.stop());

/** A new caller address for each use (the server is told to trust X-Forwarded-For from a loopback proxy). */
let lastAddress = 0;
const fromIp = () => ({ "x-forwarded-for": `198.51.100.${++lastAddress}` });

function expectLimited(res: HttpResult) {
  expect(res.status).toBe(429);
  if (res.body.errors) expect(res.body.errors.map((e: { extensions: { code: string } }) => e.extensions.code)).toEqual(["RATE_LIMITED"]);
  else expect(contractKeys(res.body)).toEqual(["error"]);
  const retryAfter = Number(res.headers.get("retry-after"));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
}

describe("rate limits", () => {
  it("answers a credential over its budget with 429 {error} and Retry-After, on REST and GraphQL; others go on", async () => {
    const ip = fromIp();
    const busy = await newTenant(server);
    const other = await newTenant(server);
    const busyHeaders = { ...busy.headers, ...ip };
    for (let i = 0; i < PER_MINUTE; i++) expect((await rest(server, "GET", "/v1/user", { headers: busyHeaders })).status).toBe(200);
    expectLimited(await rest(server, "GET", "/v1/user", { headers: busyHeaders }));
    expectLimited(await gql(server, "{ me { id } }", {}, busyHeaders));
    expectLimited(await rest(server, "GET", "/v1/user", { headers: { ...busy.headers, ...fromIp() } }));
    expect((await rest(server, "GET", "/v1/user", { headers: { ...other.headers, ...ip } })).status).toBe(200);
  });

  it("answers an IP over its budget with 429, whatever the credential", async () => {
    const ip = fromIp();
    const statuses: number[] = [];
    for (let i = 0; i < PER_IP; i++) statuses.push((await rest(server, "GET", "/v1/user", { headers: ip })).status);
    expect(statuses.every((status) => status === 401)).toBe(true);
    expectLimited(await rest(server, "GET", "/v1/user", { headers: ip }));
    const fresh = await newTenant(server);
    expectLimited(await rest(server, "GET", "/v1/user", { headers: { ...fresh.headers, ...ip } }));
    expect((await rest(server, "GET", "/v1/user", { headers: { ...fresh.headers, ...fromIp() } })).status).toBe(200);
  });

  it("counts each websocket connection_init against the IP's budget, and closes one over it (4429) without looking its key up", async () => {
    const ip = fromIp();
    const auth = server.app.services.auth;
    const authenticate = auth.authenticate.bind(auth);
    let lookups = 0;
    auth.authenticate = ((...args: Parameters<typeof authenticate>) => (lookups++, authenticate(...args))) as typeof auth.authenticate;
    try {
      const closes: number[] = [];
      for (let i = 0; i < PER_IP; i++) closes.push(await connectWs(server, { "x-api-key": `fpk_${"0".repeat(12)}.bad` }, { headers: ip }).closed);
      expect(closes.every((code) => code === 4403)).toBe(true);
      expect(lookups).toBe(PER_IP);
      expect(await connectWs(server, { "x-api-key": `fpk_${"0".repeat(12)}.bad` }, { headers: ip }).closed).toBe(TOO_MANY_CONNECTIONS);
      expect(lookups).toBe(PER_IP);
      // Whatever the credential, as over HTTP; another address goes on.
      const fresh = await newTenant(server);
      expect(await connectWs(server, { "x-api-key": fresh.apiKey }, { headers: ip }).closed).toBe(TOO_MANY_CONNECTIONS);
      const elsewhere = connectWs(server, { "x-api-key": fresh.apiKey }, { headers: fromIp() });
      try {
        expect(await elsewhere.run({ query: "{ me { id } }" })).toEqual([{ data: { me: { id: fresh.clientId } } }]);
      } finally {
        await elsewhere.dispose();
      }
    } finally {
      auth.authenticate = authenticate;
    }
  });

  // Both instances need the same database (for the tenant) and Redis (for the budget).
  it("shares one budget between instances through Redis", needs(REQUIREMENTS.postgres, REQUIREMENTS.redisUrl), async () => {
    const env = { RATE_LIMIT_PER_MINUTE: String(PER_MINUTE), TRUST_PROXY: "loopback", REDIS_URL: process.env.TEST_REDIS_URL! };
    const [one, two] = await Promise.all([startServer({ env }), startServer({ env })]);
    try {
      const tenant = await newTenant(one);
      // Redis outlives this run: an address of its own keeps other runs' requests out of the IP budget.
      const headers = { ...tenant.headers, "x-forwarded-for": `10.${crypto.getRandomValues(new Uint8Array(3)).join(".")}` };
      const statuses: number[] = [];
      for (const instance of [one, two, one, two]) statuses.push((await rest(instance, "GET", "/v1/user", { headers })).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
    } finally {
      await Promise.all([one.stop(), two.stop()]);
    }
  });
});
