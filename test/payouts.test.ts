import { Decimal } from "decimal.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";
import { contractKeys, errorCodes, gql, rest } from "./support/http.js";
import { waitForEvents, type FeedEvent } from "./support/events.js";
import { expectLedgerInvariants } from "./support/ledger.js";
import { NGN_ACCOUNT, USDC_ADDRESS, WITHDRAWAL_KEYS, balanceOf, bankWithdrawalBody, fundedUser, WITHDRAWAL_MUTATIONS, type WithdrawalAction } from "./support/withdrawals.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

const FIELDS = "reference status amount fee developerFee failureReason returnReason";

/** What a helper answered, the same on both surfaces: the record's status and reasons, or the error's code. */
type Outcome = { ok: true; status: string; failureReason: string | null; returnReason: string | null } | { ok: false; code: string; error: string };

/** The two transports of every sandbox helper: REST's path and GraphQL's mutation. */
const SURFACES = {
  REST: async (tenant: Tenant, reference: string, action: WithdrawalAction, reason?: string): Promise<Outcome> => {
    // Only fail and return take a reason (another field is refused as unknown).
    const withReason = reason !== undefined && (action === "fail" || action === "return");
    const res = await rest(server, "POST", `/v1/sandbox/withdrawals/${reference}/${action}`, { headers: tenant.headers, body: withReason ? { reason } : undefined });
    if (res.status === 200) {
      expect(Object.keys(res.body)).toEqual(res.body.developerFee === undefined ? WITHDRAWAL_KEYS : [...WITHDRAWAL_KEYS, "developerFee"]);
      return { ok: true, status: res.body.status, failureReason: res.body.failureReason, returnReason: res.body.returnReason };
    }
    expect(contractKeys(res.body)).toEqual(["error"]);
    return { ok: false, code: `${res.status} ${res.body.code}`, error: res.body.error };
  },
  GraphQL: async (tenant: Tenant, reference: string, action: WithdrawalAction, reason?: string): Promise<Outcome> => {
    const withReason = action === "fail" || action === "return";
    const res = await gql(
      server,
      `mutation ($r: ID!${withReason ? ", $reason: String" : ""}) { ${WITHDRAWAL_MUTATIONS[action]}(reference: $r${withReason ? ", reason: $reason" : ""}) { ${FIELDS} } }`,
      { r: reference, ...(withReason ? { reason } : {}) },
      tenant.headers,
    );
    const record = res.body.data?.[WITHDRAWAL_MUTATIONS[action]];
    if (record) return { ok: true, status: record.status, failureReason: record.failureReason, returnReason: record.returnReason };
    // REST answers 409 for it: the same code, named the same way for the table below.
    return { ok: false, code: errorCodes(res)[0] === "CONFLICT" ? "409 CONFLICT" : String(errorCodes(res)[0]), error: res.body.errors![0].message };
  },
};
type Surface = keyof typeof SURFACES;
const surfaces = Object.keys(SURFACES) as Surface[];

const withdrawNgn = (tenant: Tenant, body: Record<string, unknown>) => rest(server, "POST", "/v1/withdrawals/ngn", { headers: tenant.headers, body });

/** A funded user's NGN withdrawal of 5000 with a developer fee of 150, driven by REST helpers to `status`. */
async function withdrawalIn(tenant: Tenant, status: string) {
  const userId = await fundedUser(server, tenant, "NGN", "10000");
  const created = await withdrawNgn(tenant, { userId, amount: 5000, developerFee: 150, ...NGN_ACCOUNT });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const { reference } = created.body;
  const path: Record<string, WithdrawalAction[]> = { PENDING: [], PROCESSING: ["process"], COMPLETED: ["complete"], FAILED: ["fail"], RETURNED: ["complete", "return"] };
  for (const action of path[status]) expect((await SURFACES.REST(tenant, reference, action)).ok).toBe(true);
  return { userId, reference };
}

/** Everything a transition could write: the withdrawal row, its ledger entries, the client's events. */
async function footprint(tenant: Tenant, reference: string) {
  const { prisma } = server.app.db;
  const [row, entries, events] = await Promise.all([
    prisma.withdrawal.findUniqueOrThrow({ where: { reference } }),
    prisma.ledgerEntry.count({ where: { clientId: tenant.clientId } }),
    prisma.event.count({ where: { clientId: tenant.clientId } }),
  ]);
  return { status: row.status, updatedAt: row.updatedAt.toISOString(), failureReason: row.failureReason, returnReason: row.returnReason, entries, events };
}

/** The entries of a withdrawal on both sides (the user's and the house's), as "ACCOUNT TYPE amount". */
async function entriesOf(reference: string) {
  const entries = await server.app.db.prisma.ledgerEntry.findMany({ where: { referenceId: reference }, include: { account: true }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
  return entries.map((e) => `${e.account.code} ${e.type} ${new Decimal(e.amount.toString()).toFixed()}`).sort();
}

const revenueOf = async (tenant: Tenant) => {
  const res = await rest(server, "GET", "/v1/balances", { headers: tenant.headers });
  expect(res.status).toBe(200);
  const balances = res.body.balances as { currency: string; posted: number; pending: number; available: number; livemode?: boolean }[];
  // A test key's revenue is test mode's; the rows are compared without it.
  expect(balances.map((balance) => balance.livemode)).toEqual(balances.map(() => false));
  return balances.map(({ livemode: _livemode, ...balance }) => balance);
};
const graphRevenueOf = async (tenant: Tenant) => {
  const res = await gql(server, `{ clientBalances { currency posted pending available } }`, {}, tenant.headers);
  expect(res.body.errors).toBeUndefined();
  return res.body.data.clientBalances as { currency: string; posted: string; pending: string; available: string }[];
};

/**
 * The tenant's withdrawal events as the feed shows them, once `count` are there (the feed shows an
 * event when every older transaction of the database server has ended; the tenant's user.created comes first).
 */
async function withdrawalEvents(tenant: Tenant, count: number): Promise<FeedEvent[]> {
  return (await waitForEvents(server, tenant, count + 1)).filter((e) => e.type.startsWith("withdrawal."));
}
const typesAndStatuses = (events: FeedEvent[]) => events.map((e) => `${e.type} ${e.data.object.status}`);

describe.each(surfaces)("withdrawal lifecycle over %s", (surface) => {
  const helper = SURFACES[surface];

  it("PENDING → PROCESSING → COMPLETED → RETURNED: each change an event; the return gives back the amount and keeps the developer fee", async () => {
    const tenant = await newTenant(server);
    const { userId, reference } = await withdrawalIn(tenant, "PENDING");
    expect(await balanceOf(server, tenant, userId, "NGN")).toBe("4850");

    expect(await helper(tenant, reference, "process")).toEqual({ ok: true, status: "PROCESSING", failureReason: null, returnReason: null });
    expect(await helper(tenant, reference, "complete")).toMatchObject({ ok: true, status: "COMPLETED" });
    expect(await balanceOf(server, tenant, userId, "NGN")).toBe("4850");
    expect(await helper(tenant, reference, "return", "beneficiary account closed")).toEqual({
      ok: true,
      status: "RETURNED",
      failureReason: null,
      returnReason: "beneficiary account closed",
    });

    expect(await balanceOf(server, tenant, userId, "NGN")).toBe("9850");
    expect(await entriesOf(reference)).toEqual(
      [
        "USER WITHDRAWAL -5000",
        "PAYOUTS WITHDRAWAL 5000",
        "USER FEE -150",
        "CLIENT_REVENUE FEE 150",
        "USER WITHDRAWAL_REVERSAL 5000",
        "PAYOUTS WITHDRAWAL_REVERSAL -5000",
      ].sort(),
    );
    expect(await revenueOf(tenant)).toEqual([{ currency: "NGN", posted: 150, pending: 150, available: 150 }]);
    const events = await withdrawalEvents(tenant, 4);
    expect(typesAndStatuses(events)).toEqual(["withdrawal.created PENDING", "withdrawal.processing PROCESSING", "withdrawal.completed COMPLETED", "withdrawal.returned RETURNED"]);
    expect(events[3].data.object).toMatchObject({ reference, returnReason: "beneficiary account closed", fee: 150, developerFee: 150 });
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it("complete from PENDING passes through PROCESSING: both changes recorded, both events", async () => {
    const tenant = await newTenant(server);
    const { reference } = await withdrawalIn(tenant, "PENDING");
    expect(await helper(tenant, reference, "complete")).toMatchObject({ ok: true, status: "COMPLETED" });
    expect(typesAndStatuses(await withdrawalEvents(tenant, 3))).toEqual(["withdrawal.created PENDING", "withdrawal.processing PROCESSING", "withdrawal.completed COMPLETED"]);
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it.each(["PENDING", "PROCESSING"])("fail from %s: one WITHDRAWAL_REVERSAL gives back the amount and the developer fee", async (from) => {
    const tenant = await newTenant(server);
    const { userId, reference } = await withdrawalIn(tenant, from);
    expect(await helper(tenant, reference, "fail", "account closed")).toEqual({ ok: true, status: "FAILED", failureReason: "account closed", returnReason: null });
    expect(await balanceOf(server, tenant, userId, "NGN")).toBe("10000");
    const reversal = await server.app.db.prisma.ledgerJournal.findMany({ where: { referenceId: reference, type: "WITHDRAWAL_REVERSAL" }, include: { entries: true } });
    expect(reversal).toHaveLength(1);
    expect(reversal[0].entries.filter((e) => e.userId).map((e) => `${e.type} ${e.amount.toFixed()}`).sort()).toEqual(["WITHDRAWAL_REVERSAL 150", "WITHDRAWAL_REVERSAL 5000"]);
    expect(await revenueOf(tenant)).toEqual([{ currency: "NGN", posted: 0, pending: 0, available: 0 }]);
    expect(typesAndStatuses(await withdrawalEvents(tenant, from === "PENDING" ? 2 : 3)).at(-1)).toBe("withdrawal.failed FAILED");
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it("gives a return a default reason", async () => {
    const tenant = await newTenant(server);
    const { reference } = await withdrawalIn(tenant, "COMPLETED");
    expect(await helper(tenant, reference, "return")).toMatchObject({ ok: true, status: "RETURNED", returnReason: "The receiving bank returned the payout" });
  });

  const refused: [string, WithdrawalAction][] = [
    ["PENDING", "return"],
    ["PROCESSING", "return"],
    ["COMPLETED", "process"],
    ["COMPLETED", "fail"],
    ["FAILED", "process"],
    ["FAILED", "complete"],
    ["FAILED", "return"],
    ["RETURNED", "process"],
    ["RETURNED", "complete"],
    ["RETURNED", "fail"],
  ];
  it.each(refused)("refuses %s → %s with 409 CONFLICT, writing nothing", async (status, action) => {
    const tenant = await newTenant(server);
    const { reference } = await withdrawalIn(tenant, status);
    const before = await footprint(tenant, reference);
    const outcome = await helper(tenant, reference, action, "late");
    expect(outcome).toMatchObject({ ok: false, code: "409 CONFLICT" });
    expect(outcome.ok === false && outcome.error).toMatch(new RegExp(`^Withdrawal is ${status}: only a (PENDING|PENDING or PROCESSING|COMPLETED) withdrawal can be`));
    expect(await footprint(tenant, reference)).toEqual(before);
    await expectLedgerInvariants(server, tenant.clientId);
  });

  const repeated: [string, WithdrawalAction, string][] = [
    ["PENDING", "process", "PROCESSING"],
    ["PENDING", "complete", "COMPLETED"],
    ["PENDING", "fail", "FAILED"],
    ["COMPLETED", "return", "RETURNED"],
  ];
  it.each(repeated)("%s → %s → %s: a retry under the same Idempotency-Key replays the answer; a new request is 409 CONFLICT; neither writes", async (from, action, to) => {
    const tenant = await newTenant(server);
    const { reference } = await withdrawalIn(tenant, from);
    const keyed = { ...tenant, headers: { ...tenant.headers, "idempotency-key": crypto.randomUUID() } };
    const first = await helper(keyed, reference, action);
    expect(first).toMatchObject({ ok: true, status: to });
    const after = await footprint(tenant, reference);
    expect(await helper(keyed, reference, action)).toEqual(first);
    const again = await helper(tenant, reference, action);
    expect(again).toMatchObject({ ok: false, code: "409 CONFLICT" });
    expect(again.ok === false && again.error).toMatch(new RegExp(`^Withdrawal is ${to}: only a`));
    expect(await footprint(tenant, reference)).toEqual(after);
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it("refuses another client's withdrawal as unknown (404 / NOT_FOUND), and a reason over 500 characters or with a NUL (400)", async () => {
    const tenant = await newTenant(server);
    const stranger = await newTenant(server);
    const { reference } = await withdrawalIn(tenant, "COMPLETED");
    const before = await footprint(tenant, reference);
    for (const action of ["process", "complete", "fail", "return"] as const) {
      expect(await helper(stranger, reference, action)).toMatchObject({ ok: false, code: surface === "REST" ? "404 NOT_FOUND" : "NOT_FOUND" });
    }
    for (const reason of ["x".repeat(501), "bank said\u0000no"]) {
      expect(await helper(tenant, reference, "return", reason)).toMatchObject({ ok: false, code: surface === "REST" ? "400 BAD_USER_INPUT" : "BAD_USER_INPUT" });
    }
    expect(await footprint(tenant, reference)).toEqual(before);
  });
});

describe("developer fees on withdrawals", () => {
  type Path = { name: string; currency: string; funds: string; amount: string; rest: (userId: string) => { path: string; body: Record<string, unknown> }; graphql: { mutation: string; input: string; field: string }; input: (userId: string) => Record<string, unknown> };
  const PATHS: Path[] = [
    {
      name: "bank (USD)",
      currency: "USD",
      funds: "100",
      amount: "40",
      rest: (userId) => ({ path: "/v1/withdrawal/usd", body: bankWithdrawalBody(userId, "USD", 40) }),
      graphql: { mutation: "withdrawToBank", input: "WithdrawToBankInput", field: "withdrawToBank" },
      input: (userId) => ({ currency: "USD", ...bankWithdrawalBody(userId, "USD", "40") }),
    },
    {
      name: "NGN bank",
      currency: "NGN",
      funds: "100",
      amount: "40",
      rest: (userId) => ({ path: "/v1/withdrawals/ngn", body: { userId, amount: 40, ...NGN_ACCOUNT } }),
      graphql: { mutation: "withdrawNgn", input: "WithdrawNgnInput", field: "withdrawNgn" },
      input: (userId) => ({ userId, amount: "40", ...NGN_ACCOUNT }),
    },
    {
      name: "USDC",
      currency: "USDC",
      funds: "100",
      amount: "40",
      rest: (userId) => ({ path: "/v1/withdrawals/usdc", body: { userId, amount: 40, walletAddress: USDC_ADDRESS, network: "BASE", chainId: 8453 } }),
      graphql: { mutation: "withdrawUsdc", input: "WithdrawUsdcInput", field: "withdrawUsdc" },
      input: (userId) => ({ userId, amount: "40", walletAddress: USDC_ADDRESS, network: "BASE", chainId: 8453 }),
    },
  ];
  const FEES: Record<string, string> = { USD: "2.5", NGN: "2.5", USDC: "2.123456" };

  /** One withdrawal on a path and a surface; the reference, or the error. */
  async function withdraw(surface: Surface, path: Path, tenant: Tenant, userId: string, developerFee?: unknown) {
    const extra = developerFee === undefined ? {} : { developerFee };
    if (surface === "REST") {
      const { path: url, body } = path.rest(userId);
      const res = await rest(server, "POST", url, { headers: tenant.headers, body: { ...body, ...extra } });
      return { status: res.status, body: res.body, reference: res.body.reference as string | undefined, code: res.body.code as string | undefined };
    }
    const res = await gql(
      server,
      `mutation ($input: ${path.graphql.input}!) { ${path.graphql.mutation}(input: $input) { reference fee developerFee } }`,
      { input: { ...path.input(userId), ...extra } },
      tenant.headers,
    );
    const record = res.body.data?.[path.graphql.field];
    return { status: record ? 200 : 400, body: res.body, reference: record?.reference as string | undefined, code: errorCodes(res)[0], record };
  }

  describe.each(surfaces)("over %s", (surface) => {
    it.each(PATHS)("$name: debits amount + developerFee in one journal, fee = developerFee, FEE entries credit the client's revenue", async (path) => {
      const tenant = await newTenant(server);
      const userId = await fundedUser(server, tenant, path.currency, path.funds);
      const fee = FEES[path.currency];
      const result = await withdraw(surface, path, tenant, userId, surface === "REST" ? Number(fee) : fee);
      expect(result.status, JSON.stringify(result.body)).toBe(200);
      const reference = result.reference!;
      expect(await balanceOf(server, tenant, userId, path.currency)).toBe(new Decimal(path.funds).minus(path.amount).minus(fee).toFixed());
      expect(await entriesOf(reference)).toEqual([`CLIENT_REVENUE FEE ${fee}`, "PAYOUTS WITHDRAWAL 40", `USER FEE -${fee}`, "USER WITHDRAWAL -40"]);
      const journals = await server.app.db.prisma.ledgerJournal.count({ where: { referenceId: reference } });
      expect(journals).toBe(1);

      const record = await rest(server, "GET", `/v1/withdrawals/${reference}`, { headers: tenant.headers });
      expect(record.body).toMatchObject({ fee: Number(fee), developerFee: Number(fee), status: "PENDING" });
      expect(Object.keys(record.body)).toEqual([...WITHDRAWAL_KEYS, "developerFee"]);
      const graph = await gql(server, `query ($r: ID!) { withdrawal(reference: $r) { fee developerFee } }`, { r: reference }, tenant.headers);
      expect(graph.body.data.withdrawal).toEqual({ fee, developerFee: fee });
      expect(await revenueOf(tenant)).toEqual([{ currency: path.currency, posted: Number(fee), pending: Number(fee), available: Number(fee) }]);
      expect(await graphRevenueOf(tenant)).toEqual([{ currency: path.currency, posted: fee, pending: fee, available: fee }]);
      await expectLedgerInvariants(server, tenant.clientId);
    });

    it.each(PATHS)("$name: developerFee 0 is accepted and posts no FEE; the record is the one clients without the field get", async (path) => {
      const tenant = await newTenant(server);
      const userId = await fundedUser(server, tenant, path.currency, path.funds);
      const withZero = await withdraw(surface, path, tenant, userId, surface === "REST" ? 0 : "0");
      const without = await withdraw(surface, path, tenant, userId);
      for (const result of [withZero, without]) {
        expect(result.status, JSON.stringify(result.body)).toBe(200);
        expect(await entriesOf(result.reference!)).toEqual(["PAYOUTS WITHDRAWAL 40", "USER WITHDRAWAL -40"]);
        const record = await rest(server, "GET", `/v1/withdrawals/${result.reference}`, { headers: tenant.headers });
        expect(Object.keys(record.body)).toEqual(WITHDRAWAL_KEYS);
        expect(record.body.fee).toBe(0);
      }
      expect(await revenueOf(tenant)).toEqual([]);
      await expectLedgerInvariants(server, tenant.clientId);
    });

    it.each(PATHS)("$name: the balance must cover amount + developerFee (insufficient funds otherwise, nothing moved); exactly enough is enough", async (path) => {
      const tenant = await newTenant(server);
      const userId = await fundedUser(server, tenant, path.currency, "41");
      const short = await withdraw(surface, path, tenant, userId, surface === "REST" ? 1.01 : "1.01");
      if (surface === "REST") {
        expect(short.status).toBe(500);
        expect(contractKeys(short.body)).toEqual(["error", "details"]);
        expect(short.body.error).toMatch(/insufficient funds/i);
      } else {
        expect(short.code).toBe("INSUFFICIENT_FUNDS");
      }
      expect(await balanceOf(server, tenant, userId, path.currency)).toBe("41");
      expect(await server.app.db.prisma.withdrawal.count({ where: { userId } })).toBe(0);
      const exact = await withdraw(surface, path, tenant, userId, surface === "REST" ? 1 : "1");
      expect(exact.status, JSON.stringify(exact.body)).toBe(200);
      expect(await balanceOf(server, tenant, userId, path.currency)).toBe("0");
      await expectLedgerInvariants(server, tenant.clientId);
    });

    it.each(PATHS)("$name: refuses a negative, over-precise or non-numeric developerFee with a 400 naming it", async (path) => {
      const tenant = await newTenant(server);
      const userId = await fundedUser(server, tenant, path.currency, path.funds);
      const tooPrecise = path.currency === "USDC" ? "0.1234567" : "0.123";
      for (const fee of ["-1", tooPrecise, "ten"]) {
        const value = surface === "REST" && fee !== "ten" ? Number(fee) : fee;
        const result = await withdraw(surface, path, tenant, userId, value);
        if (surface === "REST") {
          expect(result.status, `${fee}: ${JSON.stringify(result.body)}`).toBe(400);
          expect(result.body.error).toMatch(/developerFee/);
        } else {
          expect(result.code, fee).toBe("BAD_USER_INPUT");
          expect(result.body.errors![0].message).toMatch(/developerFee/);
        }
      }
      expect(await balanceOf(server, tenant, userId, path.currency)).toBe(path.funds);
      expect(await server.app.db.prisma.withdrawal.count({ where: { userId } })).toBe(0);
    });
  });

  it("POST /v1/withdrawal/{currency} keeps the contract's body with a developer fee too", async () => {
    const tenant = await newTenant(server);
    const userId = await fundedUser(server, tenant, "EUR", "50");
    const res = await rest(server, "POST", "/v1/withdrawal/eur", { headers: tenant.headers, body: { ...bankWithdrawalBody(userId, "EUR", 20), developerFee: 1 } });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["success", "message", "currency", "amount", "reference", "status"]);
    expect(res.body).toMatchObject({ success: true, currency: "EUR", amount: 20, status: "PENDING" });
  });
});

describe("the client's revenue: GET /v1/balances and clientBalances", () => {
  it("is empty before any fee, counts per currency, and shows no other client's revenue", async () => {
    const tenant = await newTenant(server);
    const other = await newTenant(server);
    expect(await revenueOf(tenant)).toEqual([]);
    expect(await graphRevenueOf(tenant)).toEqual([]);
    const userId = await fundedUser(server, tenant, "NGN", "1000");
    await withdrawNgn(tenant, { userId, amount: 10, developerFee: "0.5", ...NGN_ACCOUNT });
    await withdrawNgn(tenant, { userId, amount: 10, developerFee: 0.25, ...NGN_ACCOUNT });
    const usdc = await fundedUser(server, tenant, "USDC", "10");
    await rest(server, "POST", "/v1/withdrawals/usdc", { headers: tenant.headers, body: { userId: usdc, amount: 1, developerFee: "0.000001", walletAddress: USDC_ADDRESS, network: "ETHEREUM", chainId: 1 } });
    expect(await revenueOf(tenant)).toEqual([
      { currency: "NGN", posted: 0.75, pending: 0.75, available: 0.75 },
      { currency: "USDC", posted: 0.000001, pending: 0.000001, available: 0.000001 },
    ]);
    expect(await graphRevenueOf(tenant)).toEqual([
      { currency: "NGN", posted: "0.75", pending: "0.75", available: "0.75" },
      { currency: "USDC", posted: "0.000001", pending: "0.000001", available: "0.000001" },
    ]);
    expect(await revenueOf(other)).toEqual([]);
    expect(await graphRevenueOf(other)).toEqual([]);
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it("needs credentials on both surfaces", async () => {
    expect((await rest(server, "GET", "/v1/balances")).status).toBe(401);
    expect(errorCodes(await gql(server, `{ clientBalances { currency } }`))).toEqual(["UNAUTHENTICATED"]);
  });

  it("verify refuses a revenue balance below zero (the guard every money test runs)", async () => {
    const tenant = await newTenant(server);
    const userId = await fundedUser(server, tenant, "USD", "10");
    await server.app.db.sql.transaction((tx) =>
      server.app.services.ledger.post(tx, {
        clientId: tenant.clientId,
        type: "FEE",
        postings: [
          { account: { userId, currency: "USD" }, amount: new Decimal(1), type: "FEE" },
          { account: { system: "CLIENT_REVENUE", currency: "USD" }, amount: new Decimal(-1), type: "FEE" },
        ],
      }),
    );
    const house = await server.app.services.ledger.verifyHouse(tenant.clientId);
    expect(house.valid).toBe(false);
    expect(house.problems).toEqual(["CLIENT_REVENUE USD: balance -1 is below zero"]);
  });
});
