import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest } from "./support/http.js";
import { connectWs } from "./support/pipeline.js";
import { needs, REQUIREMENTS } from "./support/requirements.js";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";

const BUDGET = 3;

let server: TestServer;
let tenant: Tenant;
beforeAll(async () => {
  // Each case sends from addresses of its own, through a proxy the server is told to trust.
  server = await startServer({ env: { AUTH_FAILURE_RATE_LIMIT_PER_MINUTE: String(BUDGET), TRUST_PROXY: "loopback" } });
  tenant = await newTenant(server);
});
afterAll(() => server?.stop());

let lastAddress = 0;
const newAddress = () => `198.51.100.${++lastAddress}`;
const BAD_KEY = { "x-api-key": "fpk_000000000000.not-a-real-secret" };

/** How a transport answered: the credential was refused, the address was limited, or the operation ran. */
type Answer = { outcome: "unauthenticated" | "limited" | "ok"; retryAfter?: number };

const overHttp = (response: { status: number; headers: Headers }): Answer => {
  const outcome = response.status === 401 ? "unauthenticated" : response.status === 429 ? "limited" : response.status === 200 ? "ok" : undefined;
  if (!outcome) throw new Error(`unexpected status ${response.status}`);
  const retryAfter = response.headers.get("retry-after");
  return { outcome, ...(retryAfter ? { retryAfter: Number(retryAfter) } : {}) };
};

/** Every transport that authenticates: each sends `credential` from `address`. */
const TRANSPORTS: { name: string; send(credential: Record<string, string>, address: string): Promise<Answer> }[] = [
  { name: "REST", send: async (credential, address) => overHttp(await rest(server, "GET", "/v1/api-keys", { headers: { ...credential, "x-forwarded-for": address } })) },
  {
    name: "GraphQL POST",
    send: async (credential, address) =>
      overHttp(await rest(server, "POST", "/graphql", { headers: { ...credential, "x-forwarded-for": address, accept: "application/graphql-response+json" }, body: { query: "{ apiKeys { id } }" } })),
  },
  {
    name: "GraphQL GET",
    send: async (credential, address) =>
      overHttp(await fetch(`${server.url}/graphql?query=${encodeURIComponent("{ apiKeys { id } }")}`, { headers: { ...credential, "x-forwarded-for": address, accept: "application/graphql-response+json" } })),
  },
  {
    name: "SSE",
    send: async (credential, address) => {
      const controller = new AbortController();
      const response = await fetch(`${server.url}/graphql`, {
        method: "POST",
        headers: { ...credential, "x-forwarded-for": address, "content-type": "application/json", accept: "text/event-stream" },
        body: JSON.stringify({ query: "subscription { depositUpdated { id } }" }),
        signal: controller.signal,
      });
      controller.abort(); // a stream that opened stays open: its status is the answer
      return overHttp(response);
    },
  },
  {
    name: "graphql-ws connection_init",
    send: async (credential, address) => {
      const connection = connectWs(server, credential, { headers: { "x-forwarded-for": address } });
      const opened = new Promise<"ok">((resolve) => connection.client.on("connected", () => resolve("ok")));
      const result = await Promise.race([opened, connection.closed]);
      await connection.dispose();
      if (result === "ok") return { outcome: "ok" };
      if (result === 4403) return { outcome: "unauthenticated" };
      if (result === 4429) return { outcome: "limited" };
      throw new Error(`unexpected close ${result}`);
    },
  },
];

describe.each(TRANSPORTS)("failed authentication over $name", ({ name, send }) => {
  it(`is answered as such ${BUDGET} times a minute per address; then the address is refused (429 with Retry-After / close 4429), a valid key included, on every transport`, async () => {
    const address = newAddress();
    for (let attempt = 0; attempt < BUDGET; attempt++) expect(await send(BAD_KEY, address)).toEqual({ outcome: "unauthenticated" });
    expect((await send(BAD_KEY, address)).outcome).toBe("limited");
    for (const transport of TRANSPORTS) {
      const answer = await transport.send(tenant.headers, address);
      expect(answer.outcome, transport.name).toBe("limited");
      // HTTP says when to come back (a websocket close has no header).
      if (!transport.name.startsWith("graphql-ws")) expect(answer.retryAfter, transport.name).toBeGreaterThanOrEqual(1);
    }
    // Another address is not touched.
    expect(await send(tenant.headers, newAddress())).toEqual({ outcome: "ok" });
  });

  it("draws on one budget shared by every transport: failures spread over the others use it up", async () => {
    const address = newAddress();
    const others = TRANSPORTS.filter((transport) => transport.name !== name);
    for (const transport of others.slice(0, BUDGET)) expect(await transport.send(BAD_KEY, address), transport.name).toEqual({ outcome: "unauthenticated" });
    expect((await send(BAD_KEY, address)).outcome).toBe("limited");
  });

  it("is not charged for valid credentials: many in a row from one address all run", async () => {
    const address = newAddress();
    for (let attempt = 0; attempt < BUDGET * 2; attempt++) expect(await send(tenant.headers, address)).toEqual({ outcome: "ok" });
  });
});

// Both instances need the same database (for the key) and Redis (for the budget).
it("is one budget for all instances through Redis: failures on one block the address on the other", needs(REQUIREMENTS.postgres, REQUIREMENTS.redisUrl), async () => {
  const env = { AUTH_FAILURE_RATE_LIMIT_PER_MINUTE: String(BUDGET), TRUST_PROXY: "loopback", REDIS_URL: process.env.TEST_REDIS_URL! };
  const [one, two] = await Promise.all([startServer({ env }), startServer({ env })]);
  try {
    const shared = await newTenant(one);
    // Redis outlives this run: an address of its own keeps other runs' failures out of the budget.
    const address = `10.${crypto.getRandomValues(new Uint8Array(3)).join(".")}`;
    const status = async (on: TestServer, credential: Record<string, string>) =>
      (await rest(on, "GET", "/v1/api-keys", { headers: { ...credential, "x-forwarded-for": address } })).status;
    for (let attempt = 0; attempt < BUDGET; attempt++) expect(await status(attempt % 2 ? two : one, BAD_KEY)).toBe(401);
    expect(await status(two, shared.headers)).toBe(429);
    expect(await status(one, shared.headers)).toBe(429);
  } finally {
    await Promise.all([one.stop(), two.stop()]);
  }
});
