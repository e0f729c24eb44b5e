import { Decimal } from "decimal.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";
import { createUser, errorCodes, gql, rest } from "./support/http.js";
import { balancesOf, expectedConversion, ledgerOf, simulateDeposit } from "./support/deposits.js";
import { waitForEvents } from "./support/events.js";
import { expectLedgerInvariants } from "./support/ledger.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

const EXTERNAL_ADDRESS = "0x71C7656EC7ab88b098defB751B7401B5f6d8976F";
const ACCOUNT_FIELDS = "id currency destinationAsset destinationAddress developerFeePercent";

/** Opens the user's virtual account on a surface; the answer's body (REST) or the account (GraphQL), or the error. */
async function openAccount(surface: "REST" | "GraphQL", tenant: Tenant, userId: string, currency: string, extra: Record<string, unknown> = {}) {
  if (surface === "REST") {
    const res = await rest(server, "POST", `/v1/virtual-account/${currency.toLowerCase()}`, { headers: tenant.headers, body: { userId, ...extra } });
    return { ok: res.status === 200, account: res.body, error: res.status === 200 ? undefined : `${res.status} ${res.body.error}` };
  }
  const res = await gql(
    server,
    `mutation ($input: CreateVirtualAccountInput!) { createVirtualAccount(input: $input) { ${ACCOUNT_FIELDS} } }`,
    { input: { currency, userId, ...extra } },
    tenant.headers,
  );
  const account = res.body.data?.createVirtualAccount;
  return { ok: Boolean(account), account, error: account ? undefined : `${errorCodes(res)[0]} ${res.body.errors![0].message}` };
}

const complete = (tenant: Tenant, id: string) => rest(server, "POST", `/v1/sandbox/deposits/${id}/complete`, { headers: tenant.headers });
const completeOverGraphQL = (tenant: Tenant, id: string) => gql(server, `mutation ($id: ID!) { completeDeposit(id: $id) { status } }`, { id }, tenant.headers);

/** The expected fee: the percentage of the converted amount, rounded down to the asset's 6 decimals. */
const feeOf = (converted: string, percent: string) => new Decimal(converted).times(percent).div(100).toDecimalPlaces(6, Decimal.ROUND_DOWN).toFixed();

describe.each(["REST", "GraphQL"] as const)("developerFeePercent over %s", (surface) => {
  it("is stored and shown on the account; without it the account is what clients always got (REST: no key; GraphQL: 0)", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const charged = await openAccount(surface, tenant, userId, "NGN", { developerFeePercent: surface === "REST" ? 2.5 : "2.5" });
    expect(charged.ok, charged.error).toBe(true);
    const plain = await openAccount(surface, tenant, userId, "USD");
    if (surface === "REST") {
      expect(charged.account.developerFeePercent).toBe(2.5);
      expect(plain.account).not.toHaveProperty("developerFeePercent");
      const lookup = await rest(server, "GET", `/v1/accounts/ngn/${userId}`, { headers: tenant.headers });
      expect(lookup.body.virtualAccount.developerFeePercent).toBe(2.5);
    } else {
      expect(charged.account.developerFeePercent).toBe("2.5");
      expect(plain.account.developerFeePercent).toBe("0");
    }
    const read = await gql(server, `query ($id: ID!) { user(id: $id) { virtualAccounts { currency developerFeePercent } } }`, { id: userId }, tenant.headers);
    expect(read.body.data.user.virtualAccounts).toEqual([
      { currency: "NGN", developerFeePercent: "2.5" },
      { currency: "USD", developerFeePercent: "0" },
    ]);
    const events = await waitForEvents(server, tenant, 2, "&type=virtual_account.created");
    expect(events.map((e) => e.data.object.developerFeePercent)).toEqual([2.5, undefined]);
  });

  it.each([
    ["above 10", 10.01],
    ["negative", -1],
    ["with 3 decimals", 1.005],
    ["not a number", "ten"],
  ])("refuses a developerFeePercent %s with a 400 naming it, opening nothing", async (_name, value) => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const refused = await openAccount(surface, tenant, userId, "NGN", { developerFeePercent: surface === "REST" ? value : String(value) });
    expect(refused.ok).toBe(false);
    expect(refused.error).toMatch(surface === "REST" ? /^400 .*developerFeePercent/ : /^BAD_USER_INPUT .*developerFeePercent/);
    expect(await server.app.db.prisma.virtualAccount.count({ where: { userId } })).toBe(0);
  });

  it("accepts the bounds 0 and 10", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    expect((await openAccount(surface, tenant, userId, "NGN", { developerFeePercent: surface === "REST" ? 0 : "0" })).ok).toBe(true);
    expect((await openAccount(surface, tenant, userId, "EUR", { developerFeePercent: surface === "REST" ? 10 : "10.00" })).ok).toBe(true);
  });

  it("a deposit pays it in the destination asset after conversion, before forwarding: FEE entries credit the client's revenue", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const opened = await openAccount(surface, tenant, userId, "NGN", { developerFeePercent: surface === "REST" ? 1.5 : "1.5", address: EXTERNAL_ADDRESS });
    expect(opened.ok, opened.error).toBe(true);

    const pending = await simulateDeposit(server, tenant, { userId, currency: "NGN", amount: 250000.5 });
    if (surface === "REST") expect((await complete(tenant, pending.id)).body.status).toBe("COMPLETED");
    else expect((await completeOverGraphQL(tenant, pending.id)).body.data.completeDeposit.status).toBe("COMPLETED");

    const { fee: ourFee, sold, converted } = expectedConversion("250000.5", "NGN", "USDC");
    const developerFee = feeOf(converted, "1.5");
    expect(developerFee).not.toBe("0");
    const forwarded = new Decimal(converted).minus(developerFee).toFixed();
    const entries = await ledgerOf(server, tenant, userId);
    expect(entries.map(({ type, currency, amount }) => `${type} ${currency} ${amount}`).sort()).toEqual(
      [
        "DEPOSIT NGN 250000.5",
        `CONVERSION_OUT NGN -${sold}`,
        `FEE NGN -${ourFee}`,
        `CONVERSION_IN USDC ${converted}`,
        `FEE USDC -${developerFee}`,
        `TRANSFER_OUT USDC -${forwarded}`,
      ].sort(),
    );
    expect(entries.find((e) => e.type === "FEE" && e.currency === "USDC")!.referenceId).toBe(pending.id);
    expect(await balancesOf(server, tenant, userId)).toEqual({ NGN: "0", USDC: "0" });

    const revenue = await rest(server, "GET", "/v1/balances", { headers: tenant.headers });
    expect(revenue.body).toEqual({ balances: [{ currency: "USDC", posted: Number(developerFee), pending: Number(developerFee), available: Number(developerFee), livemode: false }] });
    const graph = await gql(server, `{ clientBalances { currency posted pending available } }`, {}, tenant.headers);
    expect(graph.body.data.clientBalances).toEqual([{ currency: "USDC", posted: developerFee, pending: developerFee, available: developerFee }]);
    // Our own conversion fee stays ours (FEES), apart from the client's revenue.
    expect((await server.app.services.ledger.houseBalance(tenant.clientId, "FEES", "NGN")).toFixed()).toBe(ourFee);
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it("into the user's own wallet the fee is taken all the same, and the rest stays in the user's balance", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const opened = await openAccount(surface, tenant, userId, "USD", { developerFeePercent: surface === "REST" ? 10 : "10", destinationAsset: "USDT" });
    expect(opened.ok, opened.error).toBe(true);
    const pending = await simulateDeposit(server, tenant, { userId, currency: "USD", amount: "1234.57" });
    expect((await complete(tenant, pending.id)).body.status).toBe("COMPLETED");
    const { converted } = expectedConversion("1234.57", "USD", "USDT");
    const developerFee = feeOf(converted, "10");
    expect(await balancesOf(server, tenant, userId)).toEqual({ USD: "0", USDT: new Decimal(converted).minus(developerFee).toFixed() });
    const revenue = await rest(server, "GET", "/v1/balances", { headers: tenant.headers });
    expect(revenue.body.balances).toEqual([{ currency: "USDT", posted: Number(developerFee), pending: Number(developerFee), available: Number(developerFee), livemode: false }]);
    await expectLedgerInvariants(server, tenant.clientId);
  });
});

describe("deposits without a developer fee", () => {
  it("post no FEE in the destination asset and leave the client's revenue empty", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    await openAccount("REST", tenant, userId, "NGN", { developerFeePercent: 0 });
    const pending = await simulateDeposit(server, tenant, { userId, currency: "NGN", amount: 1000 });
    expect((await complete(tenant, pending.id)).body.status).toBe("COMPLETED");
    expect((await ledgerOf(server, tenant, userId)).filter((e) => e.currency === "USDC").map((e) => e.type)).toEqual(["CONVERSION_IN"]);
    expect((await rest(server, "GET", "/v1/balances", { headers: tenant.headers })).body).toEqual({ balances: [] });
    await expectLedgerInvariants(server, tenant.clientId);
  });
});
