import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Decimal } from "decimal.js";
import { startServer, newTenant, type Tenant, type TestServer } from "./support/server.js";
import { expectLedgerInvariants } from "./support/ledger.js";
import { needs, REQUIREMENTS } from "./support/requirements.js";
import { createUser, errorCodes, gql, rest } from "./support/http.js";
import {
  DEPOSIT_KEYS,
  balancesOf,
  depositsOf,
  expectedConversion,
  ledgerOf,
  ledgerVerifies,
  newVirtualAccount,
  simulateDeposit,
} from "./support/deposits.js";

const EXTERNAL_ADDRESS = "0x000000000000000000000000000000000000dEaD";
const BASE_USDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

const complete = (tenant: { headers: Record<string, string> }, id: string) =>
  rest(server, "POST", `/v1/sandbox/deposits/${id}/complete`, { headers: tenant.headers });
const fail = (tenant: { headers: Record<string, string> }, id: string, body?: unknown) =>
  rest(server, "POST", `/v1/sandbox/deposits/${id}/fail`, { headers: tenant.headers, body });

describe("virtual account deposit", () => {
  it("is PENDING, then on completion credits NGN and converts all of it to USDC in the user's own wallet", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    await newVirtualAccount(server, tenant, userId, "ngn");

    const pending = await simulateDeposit(server, tenant, { userId, currency: "ngn", amount: 250000.5 });
    expect(Object.keys(pending)).toEqual([...DEPOSIT_KEYS, "paymentReference"]);
    expect(pending).toMatchObject({ userId, amount: 250000.5, status: "PENDING", currency: "NGN" });
    expect(await ledgerOf(server, tenant, userId)).toEqual([]);

    const done = await complete(tenant, pending.id);
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ id: pending.id, status: "COMPLETED", eventId: pending.eventId });

    const { fee, sold, converted } = expectedConversion("250000.5", "NGN", "USDC");
    const entries = await ledgerOf(server, tenant, userId);
    expect(entries.map(({ type, currency, amount }) => ({ type, currency, amount })).sort((a, b) => a.type.localeCompare(b.type))).toEqual([
      { type: "CONVERSION_IN", currency: "USDC", amount: converted },
      { type: "CONVERSION_OUT", currency: "NGN", amount: `-${sold}` },
      { type: "DEPOSIT", currency: "NGN", amount: "250000.5" },
      { type: "FEE", currency: "NGN", amount: `-${fee}` },
    ]);
    expect(entries.find((e) => e.type === "DEPOSIT")!.referenceId).toBe(pending.id);
    expect(await balancesOf(server, tenant, userId)).toEqual({ NGN: "0", USDC: converted });
    await ledgerVerifies(server, userId, tenant.clientId);
  });

  it("forwards the converted amount with a TRANSFER_OUT when the destination is an external address", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    await newVirtualAccount(server, tenant, userId, "usd", { destinationAsset: "USDT", address: EXTERNAL_ADDRESS });

    const pending = await simulateDeposit(server, tenant, { userId, currency: "USD", amount: "1234.57" });
    expect(Object.keys(pending)).toEqual(DEPOSIT_KEYS);
    expect((await complete(tenant, pending.id)).body.status).toBe("COMPLETED");

    const { fee, sold, converted } = expectedConversion("1234.57", "USD", "USDT");
    const entries = await ledgerOf(server, tenant, userId);
    const byType = Object.fromEntries(entries.map((e) => [e.type, e]));
    expect(entries).toHaveLength(5);
    expect(byType.DEPOSIT).toMatchObject({ currency: "USD", amount: "1234.57", referenceId: pending.id });
    expect(byType.CONVERSION_OUT).toMatchObject({ currency: "USD", amount: `-${sold}` });
    expect(byType.FEE).toMatchObject({ currency: "USD", amount: `-${fee}` });
    expect(byType.CONVERSION_IN).toMatchObject({ currency: "USDT", amount: converted });
    expect(byType.TRANSFER_OUT).toMatchObject({ currency: "USDT", amount: `-${converted}` });
    expect(byType.TRANSFER_OUT.referenceId).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await balancesOf(server, tenant, userId)).toEqual({ USD: "0", USDT: "0" });
    await ledgerVerifies(server, userId, tenant.clientId);
  });

  it("answers 400 when the user has no virtual account in the currency", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const res = await rest(server, "POST", "/v1/sandbox/deposits", { headers: tenant.headers, body: { userId, currency: "EUR", amount: 10 } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/no EUR virtual account/);
  });
});

describe("on-chain deposit", () => {
  it("credits the token at the user's wallet, with the real token contract, hash and chain", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);

    const pending = await simulateDeposit(server, tenant, { userId, currency: "usdc", amount: "12.345678", chainId: 8453 });
    expect(Object.keys(pending)).toEqual([...DEPOSIT_KEYS, "tokenAddress", "transactionHash", "chainId"]);
    expect(pending).toMatchObject({ currency: "USDC", amount: 12.345678, status: "PENDING", tokenAddress: BASE_USDC, chainId: 8453 });
    expect(pending.transactionHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(pending.eventId).toBe(`${pending.transactionHash}:0`);

    expect((await complete(tenant, pending.id)).body.status).toBe("COMPLETED");
    const entries = await ledgerOf(server, tenant, userId);
    expect(entries).toEqual([{ type: "DEPOSIT", currency: "USDC", amount: "12.345678", referenceId: pending.id }]);
    expect(await balancesOf(server, tenant, userId)).toEqual({ USDC: "12.345678" });
    const wallet = await rest(server, "GET", `/v1/wallet/${userId}`, { headers: tenant.headers });
    expect(wallet.status).toBe(200);
    await ledgerVerifies(server, userId, tenant.clientId);
  });

  it("defaults to Ethereum and refuses tokens a chain does not carry, unknown chains, and chainId on fiat", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const dai = await simulateDeposit(server, tenant, { userId, currency: "DAI", amount: "1.5" });
    expect(dai).toMatchObject({ chainId: 1, tokenAddress: "0x6B175474E89094C44Da98b954EedeAC495271d0F" });
    for (const body of [
      { userId, currency: "USDT", amount: 1, chainId: 137 },
      { userId, currency: "USDC", amount: 1, chainId: 999 },
      { userId, currency: "USDC", amount: 1, chainId: "1" },
      { userId, currency: "NGN", amount: 1, chainId: 1 },
    ]) {
      const res = await rest(server, "POST", "/v1/sandbox/deposits", { headers: tenant.headers, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toMatch(/chainId/);
    }
  });
});

describe("POST /v1/sandbox/deposits validation", () => {
  it.each([
    ["zero", { currency: "USDC", amount: 0 }, /amount must be greater than zero/],
    ["negative", { currency: "USDC", amount: -5 }, /amount/],
    ["too many decimals for USDC", { currency: "USDC", amount: "1.0000001" }, /more than 6 decimals/],
    ["too many decimals for fiat", { currency: "NGN", amount: 10.001 }, /more than 2 decimals/],
    // JSON.parse turns this into 0.12345678901234568: not the amount the client meant.
    ["a JSON number longer than a double keeps exactly", { currency: "DAI", amount: 0.123456789012345678 }, /amount: .*send it as a string/],
    ["non-numeric", { currency: "USDC", amount: "ten" }, /amount/],
    ["missing amount", { currency: "USDC" }, /amount/],
    ["unsupported currency", { currency: "GBP", amount: 1 }, /currency must be one of/],
  ])("refuses %s with 400", async (_name, body, message) => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const res = await rest(server, "POST", "/v1/sandbox/deposits", { headers: tenant.headers, body: { userId, ...body } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(message);
    expect(await depositsOf(server, tenant, userId)).toEqual([]);
  });

  it("keeps every digit of a long JSON number amount that the client really sent", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const rawBody = `{"userId": "${userId}", "currency": "DAI", "amount": 0.123456789012345678}`;
    const res = await rest(server, "POST", "/v1/sandbox/deposits", { headers: tenant.headers, rawBody });
    expect(res.status).toBe(201);
    const [deposit] = await server.app.db.prisma.deposit.findMany({ where: { userId } });
    expect(deposit.amount.toFixed(18)).toBe("0.123456789012345678");
  });

  it("answers 400 for a non-UUID user id, 404 for an unknown user, 401 without credentials", async () => {
    const tenant = await newTenant(server);
    const bad = await rest(server, "POST", "/v1/sandbox/deposits", { headers: tenant.headers, body: { userId: "nope", currency: "USDC", amount: 1 } });
    expect(bad.status).toBe(400);
    const unknown = await rest(server, "POST", "/v1/sandbox/deposits", { headers: tenant.headers, body: { userId: crypto.randomUUID(), currency: "USDC", amount: 1 } });
    expect(unknown.status).toBe(404);
    const anonymous = await rest(server, "POST", "/v1/sandbox/deposits", { body: { userId: crypto.randomUUID(), currency: "USDC", amount: 1 } });
    expect(anonymous.status).toBe(401);
  });
});

describe("deposit lifecycle", () => {
  it("fails a PENDING deposit without moving money; it cannot be completed afterwards", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const pending = await simulateDeposit(server, tenant, { userId, currency: "USDC", amount: 3 });
    const failed = await fail(tenant, pending.id, { reason: "compliance hold" });
    expect(failed.status).toBe(200);
    expect(failed.body.status).toBe("FAILED");
    const failingAgain = await fail(tenant, pending.id);
    expect(failingAgain.status).toBe(409);
    expect(failingAgain.body.error).toBe("Deposit is FAILED: only a PENDING deposit can be failed");
    const completing = await complete(tenant, pending.id);
    expect(completing.status).toBe(409);
    expect(await ledgerOf(server, tenant, userId)).toEqual([]);
    const read = await gql(server, `query ($id: ID!) { deposit(id: $id) { status failureReason } }`, { id: pending.id }, tenant.headers);
    expect(read.body.data?.deposit).toEqual({ status: "FAILED", failureReason: "compliance hold" });
  });

  it("completes once: a second completion is 409 (its Idempotency-Key retry replays the first), and a completed deposit cannot fail", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const pending = await simulateDeposit(server, tenant, { userId, currency: "USDC", amount: 7 });
    const keyed = { headers: { ...tenant.headers, "idempotency-key": crypto.randomUUID() } };
    const first = await complete(keyed, pending.id);
    expect(first.body.status).toBe("COMPLETED");
    expect(await complete(keyed, pending.id)).toMatchObject({ status: 200, body: first.body });
    const results = await Promise.all([complete(tenant, pending.id), complete(tenant, pending.id)]);
    expect(results.map((r) => [r.status, r.body.error])).toEqual(Array(2).fill([409, "Deposit is COMPLETED: only a PENDING deposit can be completed"]));
    expect((await fail(tenant, pending.id)).status).toBe(409);
    expect(await ledgerOf(server, tenant, userId)).toHaveLength(1);
    expect(await balancesOf(server, tenant, userId)).toEqual({ USDC: "7" });
  });

  it("announces the creation and every status change of a deposit", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const seen: string[] = [];
    const iterator = server.app.services.events.subscribe("deposit")[Symbol.asyncIterator]();
    const collect = (async () => {
      while (seen.length < 2) {
        const { value, done } = await iterator.next();
        if (done) return;
        if (value.userId === userId) seen.push(value.status);
      }
    })();
    const pending = await simulateDeposit(server, tenant, { userId, currency: "USDC", amount: 1 });
    await complete(tenant, pending.id);
    await Promise.race([collect, new Promise((resolve) => setTimeout(resolve, 3000))]);
    await iterator.return?.();
    expect(seen).toEqual(["PENDING", "COMPLETED"]);
  });
});

describe("GET /v1/transactions/deposits/{userId}", () => {
  it("lists newest first, pages with page/limit, and refuses bad paging", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const ids = [];
    for (const amount of [1, 2, 3]) ids.push((await simulateDeposit(server, tenant, { userId, currency: "USDC", amount })).id);
    const all = await depositsOf(server, tenant, userId);
    expect(all.map((d) => d.id)).toEqual([...ids].reverse());
    expect(Object.keys(all[0])).toEqual([...DEPOSIT_KEYS, "tokenAddress", "transactionHash", "chainId"]);
    expect((await depositsOf(server, tenant, userId, "?page=2&limit=2")).map((d) => d.id)).toEqual([ids[0]]);
    for (const query of ["?limit=0", "?limit=1001", "?page=0", "?page=x"]) {
      const res = await rest(server, "GET", `/v1/transactions/deposits/${userId}${query}`, { headers: tenant.headers });
      expect(res.status, query).toBe(400);
    }
  });

  it("answers 404 for an unknown user and 400 for a non-UUID id", async () => {
    const tenant = await newTenant(server);
    expect((await rest(server, "GET", `/v1/transactions/deposits/${crypto.randomUUID()}`, { headers: tenant.headers })).status).toBe(404);
    expect((await rest(server, "GET", "/v1/transactions/deposits/123", { headers: tenant.headers })).status).toBe(400);
  });
});

describe("GraphQL", () => {
  it("simulates, completes and fails deposits, and nests them under User", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const fields = "id status amount currency chainId tokenAddress paymentReference";
    const simulated = await gql(
      server,
      `mutation ($input: SimulateDepositInput!) { simulateDeposit(input: $input) { ${fields} } }`,
      { input: { userId, currency: "USDC", amount: "2.5" } },
      tenant.headers,
    );
    expect(simulated.body.data?.simulateDeposit).toMatchObject({ status: "PENDING", amount: "2.5", currency: "USDC", chainId: 1, paymentReference: null });
    const id = simulated.body.data!.simulateDeposit.id;
    const second = await gql(server, `mutation ($input: SimulateDepositInput!) { simulateDeposit(input: $input) { id } }`, { input: { userId, currency: "USDC", amount: "1" } }, tenant.headers);
    const completed = await gql(server, `mutation ($id: ID!) { completeDeposit(id: $id) { status } }`, { id }, tenant.headers);
    expect(completed.body.data?.completeDeposit.status).toBe("COMPLETED");
    const failed = await gql(server, `mutation ($id: ID!) { failDeposit(id: $id, reason: "bounced") { status failureReason } }`, { id: second.body.data!.simulateDeposit.id }, tenant.headers);
    expect(failed.body.data?.failDeposit).toEqual({ status: "FAILED", failureReason: "bounced" });
    const nested = await gql(server, `query ($id: ID!) { user(id: $id) { deposits(first: 10) { totalCount edges { node { id status } } } } }`, { id: userId }, tenant.headers);
    expect(nested.body.data?.user.deposits.totalCount).toBe(2);
    expect(nested.body.data?.user.deposits.edges.map((edge: { node: { status: string } }) => edge.node.status)).toEqual(["FAILED", "COMPLETED"]);
  });
});

describe("tenant isolation", () => {
  it("treats another client's user and deposits as unknown", async () => {
    const owner = await newTenant(server);
    const other = await newTenant(server);
    const userId = await createUser(server, owner);
    const pending = await simulateDeposit(server, owner, { userId, currency: "USDC", amount: 1 });

    expect((await rest(server, "GET", `/v1/transactions/deposits/${userId}`, { headers: other.headers })).status).toBe(404);
    expect((await complete(other, pending.id)).status).toBe(404);
    expect((await fail(other, pending.id)).status).toBe(404);
    const simulate = await rest(server, "POST", "/v1/sandbox/deposits", { headers: other.headers, body: { userId, currency: "USDC", amount: 1 } });
    expect(simulate.status).toBe(404);
    const read = await gql(server, `query ($id: ID!) { deposit(id: $id) { id } }`, { id: pending.id }, other.headers);
    expect(errorCodes(read)).toEqual(["NOT_FOUND"]);
    expect((await depositsOf(server, owner, userId)).map((d) => d.status)).toEqual(["PENDING"]);
  });
});

describe("automatic settlement", () => {
  it("completes a sandbox deposit by itself after SANDBOX_SETTLE_MS", async () => {
    const quick = await startServer({ env: { SANDBOX_SETTLE_MS: "200" } });
    try {
      const tenant = await newTenant(quick);
      const userId = await createUser(quick, tenant);
      const pending = await simulateDeposit(quick, tenant, { userId, currency: "USDC", amount: "4.2" });
      expect(pending.status).toBe("PENDING");
      const deadline = Date.now() + 5000;
      let status = "PENDING";
      while (status === "PENDING" && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        status = (await depositsOf(quick, tenant, userId))[0].status as string;
      }
      expect(status).toBe("COMPLETED");
      expect(await balancesOf(quick, tenant, userId)).toEqual({ USDC: "4.2" });
    } finally {
      await quick.stop();
    }
  });
});

// Two instances need one shared database: only on PostgreSQL (each embedded server has its own).
describe("complete racing fail", needs(REQUIREMENTS.postgres), () => {
  /** One settlement over REST or GraphQL, answering the HTTP status REST gives it. */
  const settle = async (tenant: Tenant, id: string, action: "complete" | "fail", transport: "REST" | "GraphQL") => {
    if (transport === "REST") return (await (action === "complete" ? complete(tenant, id) : fail(tenant, id))).status;
    const res = await gql(server, `mutation ($id: ID!) { settled: ${action}Deposit(id: $id) { status } }`, { id }, tenant.headers);
    return res.body.data?.settled ? 200 : errorCodes(res)[0] === "CONFLICT" ? 409 : JSON.stringify(res.body.errors);
  };

  it("24 times: exactly one answers 200 and the other 409, and the ledger holds the credit only when complete won", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    let credited = new Decimal(0);
    const winners = new Set<string>();
    for (let i = 0; i < 24; i++) {
      const pending = await simulateDeposit(server, tenant, { userId, currency: "USDC", amount: 1 + i });
      const [transportA, transportB] = i % 2 === 0 ? (["REST", "GraphQL"] as const) : (["GraphQL", "REST"] as const);
      const [completing, failing] = await Promise.all([settle(tenant, pending.id, "complete", transportA), settle(tenant, pending.id, "fail", transportB)]);
      expect([completing, failing].sort(), `round ${i}`).toEqual([200, 409]);
      const { status } = await server.app.db.prisma.deposit.findUniqueOrThrow({ where: { id: pending.id } });
      expect(status).toBe(completing === 200 ? "COMPLETED" : "FAILED");
      winners.add(status);
      const journals = await server.app.db.prisma.ledgerJournal.count({ where: { referenceId: pending.id } });
      expect(journals, `round ${i}`).toBe(status === "COMPLETED" ? 1 : 0);
      if (status === "COMPLETED") credited = credited.plus(1 + i);
    }
    expect(await balancesOf(server, tenant, userId)).toEqual(credited.isZero() ? {} : { USDC: credited.toFixed() });
    await expectLedgerInvariants(server, tenant.clientId);
  });
});

describe("two instances settling the same deposits", needs(REQUIREMENTS.postgres), () => {
  it("complete each deposit exactly once", async () => {
    const instances = await Promise.all([1, 2].map(() => startServer({ env: { SANDBOX_SETTLE_MS: "300" } })));
    try {
      const [first, second] = instances;
      const tenant = await newTenant(first);
      const userId = await createUser(first, tenant);
      await newVirtualAccount(first, tenant, userId, "MXN", { address: EXTERNAL_ADDRESS });
      const ids = [];
      for (let i = 0; i < 6; i++) {
        const on = i % 2 ? first : second;
        ids.push((await simulateDeposit(on, tenant, i % 3 ? { userId, currency: "USDC", amount: i + 1 } : { userId, currency: "MXN", amount: 100 })).id);
      }
      const deadline = Date.now() + 10_000;
      let statuses: unknown[] = [];
      do {
        await new Promise((resolve) => setTimeout(resolve, 150));
        statuses = (await depositsOf(first, tenant, userId)).map((d) => d.status);
      } while (statuses.includes("PENDING") && Date.now() < deadline);
      expect(statuses).toEqual(Array(6).fill("COMPLETED"));
      const entries = await ledgerOf(first, tenant, userId);
      for (const id of ids) expect(entries.filter((e) => e.type === "DEPOSIT" && e.referenceId === id)).toHaveLength(1);
      expect(entries.filter((e) => e.type === "TRANSFER_OUT")).toHaveLength(2);
      await ledgerVerifies(first, userId, tenant.clientId);
    } finally {
      await Promise.all(instances.map((instance) => instance.stop()));
    }
  });
});

describe("with SANDBOX off", () => {
  it("has no sandbox deposit helpers", async () => {
    const production = await startServer({ env: { SANDBOX: "off" } });
    try {
      const tenant = await newTenant(production, "live");
      const userId = await createUser(production, tenant);
      const res = await rest(production, "POST", "/v1/sandbox/deposits", { headers: tenant.headers, body: { userId, currency: "USDC", amount: 1 } });
      expect(res.status).toBe(404);
      const mutation = await gql(production, `mutation ($input: SimulateDepositInput!) { simulateDeposit(input: $input) { id } }`, { input: { userId, currency: "USDC", amount: "1" } }, tenant.headers);
      expect(errorCodes(mutation)).toEqual(["TEST_MODE_ONLY"]);
      // Test mode itself is off: a test key is refused whatever it asks.
      const testKey = await newTenant(production, "test");
      const refused = await rest(production, "GET", "/v1/user", { headers: testKey.headers });
      expect(refused.status).toBe(403);
      expect(refused.body.code).toBe("TEST_MODE_DISABLED");
    } finally {
      await production.stop();
    }
  });
});
