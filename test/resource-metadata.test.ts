import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitForEvents } from "./support/events.js";
import { createUser, gql, rest } from "./support/http.js";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";
import { BANK_ACCOUNTS, HOLDER, NGN_ACCOUNT, USDC_ADDRESS, fundedUser } from "./support/withdrawals.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

type Created = { status: number; error?: string; metadata?: unknown; read: () => Promise<unknown>; eventType?: string };
type Resource = { rest: (tenant: Tenant, metadata: unknown) => Promise<Created>; graphql: (tenant: Tenant, metadata: unknown) => Promise<Created> };

const call = (tenant: Tenant, method: string, path: string, body?: unknown) => rest(server, method, path, { headers: tenant.headers, body });
const graphqlCreated = async (tenant: Tenant, query: string, input: Record<string, unknown>, field: string, read: (data: any) => Promise<unknown>) => {
  const res = await gql(server, query, { input }, tenant.headers);
  const error = res.body.errors?.[0];
  if (error) return { status: error.extensions?.code === "BAD_USER_INPUT" ? 400 : 500, error: error.message, read: async () => undefined };
  const data = res.body.data[field];
  return { status: 200, metadata: data.metadata, read: () => read(data) };
};

/** Every resource besides users that takes metadata on create, on both surfaces. */
const resources: Record<string, Resource & { eventType?: string }> = {
  "virtual account": {
    eventType: "virtual_account.created",
    rest: async (tenant, metadata) => {
      const userId = await createUser(server, tenant);
      const res = await call(tenant, "POST", "/v1/virtual-account/NGN", { userId, metadata });
      const read = async () => (await gql(server, `query ($id: ID!) { user(id: $id) { virtualAccounts { metadata } } }`, { id: userId }, tenant.headers)).body.data.user.virtualAccounts[0].metadata;
      return { status: res.status, error: res.body.error, metadata: res.body.metadata, read };
    },
    graphql: async (tenant, metadata) => {
      const userId = await createUser(server, tenant);
      return graphqlCreated(tenant, `mutation ($input: CreateVirtualAccountInput!) { createVirtualAccount(input: $input) { userId metadata } }`, { currency: "USD", userId, metadata }, "createVirtualAccount",
        async (data) => (await gql(server, `query ($id: ID!) { user(id: $id) { virtualAccounts { metadata } } }`, { id: data.userId }, tenant.headers)).body.data.user.virtualAccounts[0].metadata);
    },
  },
  "NGN withdrawal": {
    eventType: "withdrawal.created",
    rest: async (tenant, metadata) => {
      const userId = await fundedUser(server, tenant, "NGN", "10000");
      const res = await call(tenant, "POST", "/v1/withdrawals/ngn", { userId, amount: 100, ...NGN_ACCOUNT, metadata });
      return { status: res.status, error: res.body.error, metadata: res.body.metadata, read: async () => (await call(tenant, "GET", `/v1/withdrawals/${res.body.reference}`)).body.metadata };
    },
    graphql: async (tenant, metadata) => {
      const userId = await fundedUser(server, tenant, "NGN", "10000");
      return graphqlCreated(tenant, `mutation ($input: WithdrawNgnInput!) { withdrawNgn(input: $input) { reference metadata } }`, { userId, amount: "100", ...NGN_ACCOUNT, metadata }, "withdrawNgn",
        async (data) => (await call(tenant, "GET", `/v1/withdrawals/${data.reference}`)).body.metadata);
    },
  },
  "USDC withdrawal": {
    eventType: "withdrawal.created",
    rest: async (tenant, metadata) => {
      const userId = await fundedUser(server, tenant, "USDC", "100");
      const res = await call(tenant, "POST", "/v1/withdrawals/usdc", { userId, amount: 1, walletAddress: USDC_ADDRESS, network: "BASE", chainId: 8453, metadata });
      return { status: res.status, error: res.body.error, metadata: res.body.metadata, read: async () => (await call(tenant, "GET", `/v1/withdrawals/${res.body.reference}`)).body.metadata };
    },
    graphql: async (tenant, metadata) => {
      const userId = await fundedUser(server, tenant, "USDC", "100");
      return graphqlCreated(tenant, `mutation ($input: WithdrawUsdcInput!) { withdrawUsdc(input: $input) { reference metadata } }`,
        { userId, amount: "1", walletAddress: USDC_ADDRESS, network: "BASE", chainId: 8453, metadata }, "withdrawUsdc",
        async (data) => (await call(tenant, "GET", `/v1/withdrawals/${data.reference}`)).body.metadata);
    },
  },
  "bank withdrawal": {
    eventType: "withdrawal.created",
    rest: async (tenant, metadata) => {
      const userId = await fundedUser(server, tenant, "EUR", "100");
      const res = await call(tenant, "POST", "/v1/withdrawal/eur", { userId, ...HOLDER, amount: 10, bankAccount: BANK_ACCOUNTS.EUR, metadata });
      return { status: res.status, error: res.body.error, metadata: undefined, read: async () => (await call(tenant, "GET", `/v1/withdrawals/${res.body.reference}`)).body.metadata };
    },
    graphql: async (tenant, metadata) => {
      const userId = await fundedUser(server, tenant, "EUR", "100");
      return graphqlCreated(tenant, `mutation ($input: WithdrawToBankInput!) { withdrawToBank(input: $input) { reference metadata } }`,
        { currency: "EUR", userId, ...HOLDER, amount: "10", bankAccount: BANK_ACCOUNTS.EUR, metadata }, "withdrawToBank",
        async (data) => (await call(tenant, "GET", `/v1/withdrawals/${data.reference}`)).body.metadata);
    },
  },
  "webhook endpoint": {
    rest: async (tenant, metadata) => {
      const res = await call(tenant, "POST", "/v1/webhook-endpoints", { url: "http://127.0.0.1:9/hooks", metadata });
      return { status: res.status === 201 ? 200 : res.status, error: res.body.error, metadata: res.body.metadata, read: async () => (await call(tenant, "GET", `/v1/webhook-endpoints/${res.body.id}`)).body.metadata };
    },
    graphql: async (tenant, metadata) =>
      graphqlCreated(tenant, `mutation ($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { id metadata } }`, { url: "http://127.0.0.1:9/hooks", metadata }, "createWebhookEndpoint",
        async (data) => (await gql(server, `query ($id: ID!) { webhookEndpoint(id: $id) { metadata } }`, { id: data.id }, tenant.headers)).body.data.webhookEndpoint.metadata),
  },
};

const cases = Object.entries(resources).flatMap(([name, resource]) =>
  (["rest", "graphql"] as const).map((surface) => ({ name: `${name} over ${surface === "rest" ? "REST" : "GraphQL"}`, create: resource[surface], eventType: resource.eventType })),
);

describe.each(cases)("metadata on a $name", ({ create, eventType }) => {
  it("is kept on create (\"\" and null leave a key out) and returned on reads and in the event", async () => {
    const tenant = await newTenant(server);
    const created = await create(tenant, { invoice: "inv_1", note: "", gone: null });
    expect(created.status, created.error).toBe(200);
    if (created.metadata !== undefined) expect(created.metadata).toEqual({ invoice: "inv_1" });
    expect(await created.read()).toEqual({ invoice: "inv_1" });
    if (eventType) {
      const [event] = await waitForEvents(server, tenant, 1, `&type=${eventType}`);
      expect(event.data.object.metadata).toEqual({ invoice: "inv_1" });
    }
  });

  it("is {} when none is sent", async () => {
    const created = await create(await newTenant(server), undefined);
    expect(created.status, created.error).toBe(200);
    expect(await created.read()).toEqual({});
  });

  it.each([
    [Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"])), /metadata: must have at most 50 keys/],
    [{ ["k".repeat(41)]: "v" }, /must be 1 to 40 characters/],
    [{ "a[b]": "v" }, /key "a\[b\]" must not contain \[ or \]/],
    [{ note: "x".repeat(501) }, /value of "note" must be at most 500 characters/],
    [{ amount: 5 }, /value of "amount" must be a string/],
  ])("refuses %j with 400 naming the key", async (metadata, message) => {
    const created = await create(await newTenant(server), metadata);
    expect(created.status).toBe(400);
    expect(created.error).toMatch(message);
  });
});
