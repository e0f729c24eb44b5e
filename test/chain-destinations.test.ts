import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Decimal } from "decimal.js";
import { zeroAddress, type Address } from "viem";
import { parseChainSettings, DEFAULT_WITHDRAWAL_RULES } from "../src/chain/networks.js";
import { NETWORKS } from "../src/providers/chains.js";
import { sweepThresholds } from "../src/chain/sweeps.js";
import { balancesOf, ledgerOf } from "./support/deposits.js";
import { createUser, gql, rest } from "./support/http.js";
import { expectLedgerInvariants, fund } from "./support/ledger.js";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";
import { deployToken, freshAddress, liveBaseEnv, startAnvil, testCustody, type Anvil, type Token } from "./support/chain.js";
import { until } from "./support/until.js";

// Where money may not go, and what a withdrawal on a chain costs, on a live BASE (a real anvil, our
// own token as its USDC): a minimum of 2 USDC and a network fee of 0.25 USDC here. The token's own
// logs, read from the node, are the count of what was sent.
const MIN = "2";
const FEE = "0.25";
const { masterKey: MASTER_KEY, treasury: TREASURY, testTreasury: TEST_TREASURY } = testCustody(23);
let anvil: Anvil;
let token: Token;
let server: TestServer;
let live: Tenant;
let test: Tenant;

beforeAll(async () => {
  anvil = await startAnvil();
  token = await deployToken(anvil, { symbol: "USDC", decimals: 6 });
  await token.mint(TREASURY, 1_000_000_000n);
  await anvil.setBalance(TREASURY, 10n ** 20n);
  const env = liveBaseEnv(anvil, token, { CHAIN_MIN_WITHDRAWAL_BASE_USDC: MIN, CHAIN_NETWORK_FEE_BASE_USDC: FEE, CHAIN_CONFIRMATIONS_BASE: "1" });
  server = await startServer({ env: { ...env, CUSTODIAN_MASTER_KEY: MASTER_KEY } });
  [live, test] = await Promise.all([newTenant(server, "live"), newTenant(server, "test")]);
  await until(async () => server.app.services.chain.chainIdOf("live", "BASE") !== undefined, "the RPC's chain id");
}, 240_000);

afterAll(async () => {
  await server?.stop();
  await anvil?.stop();
});

async function fundedUser(tenant: Tenant, amount: string) {
  const userId = await createUser(server, tenant);
  await fund(server, tenant.clientId, userId, "USDC", amount);
  return userId;
}

async function walletOf(tenant: Tenant, userId: string): Promise<Address> {
  const res = await rest(server, "POST", "/v1/wallet", { headers: tenant.headers, body: { userId } });
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  return res.body.address;
}

const usdcBody = (userId: string, walletAddress: string, amount: number | string = 5) => ({ userId, amount, walletAddress, network: "BASE", chainId: anvil.chainId });

const WITHDRAW_USDC = `mutation ($input: WithdrawUsdcInput!) { withdrawUsdc(input: $input) { reference amount fee networkFee developerFee status } }`;
const CREATE_ACCOUNT = `mutation ($input: CreateVirtualAccountInput!) { createVirtualAccount(input: $input) { id destinationAddress } }`;
const forwardingAccount = (userId: string, address: string) => ({ userId, destinationAsset: "USDC", destinationNetwork: "BASE", address });

/** What the user has: balances, withdrawals and virtual accounts (nothing may change on a refusal). */
async function holdings(tenant: Tenant, userId: string) {
  const res = await gql(server, `query ($id: ID!) { user(id: $id) { withdrawalsPage { reference } virtualAccounts { id } } }`, { id: userId }, tenant.headers);
  return { balances: await balancesOf(server, tenant, userId), ...res.body.data!.user };
}

describe("destinations that are refused", () => {
  // Each case: the address (from what the set-up made), and what the refusal says.
  const cases: [string, (own: Address) => Promise<string> | string, RegExp][] = [
    ["the zero address", () => zeroAddress, /zero address/],
    ["the token contract of this network", () => token.address, /USDC contract on BASE/],
    ["the token contract, all upper-case hex", () => `0x${token.address.slice(2).toUpperCase()}`, /USDC contract on BASE/],
    ["a token contract of another network", () => NETWORKS.find((n) => n.name === "ETHEREUM")!.tokens.USDC, /USDC contract on ETHEREUM/],
    ["the live treasury", () => TREASURY, /live treasury/],
    ["the live treasury, all lower-case", () => TREASURY.toLowerCase(), /live treasury/],
    ["the test treasury", () => TEST_TREASURY, /test treasury/],
    ["another user's deposit address", async () => walletOf(live, await createUser(server, live)), /deposit address of this platform/],
    ["a deposit address of the other mode", async () => walletOf(test, await createUser(server, test)), /deposit address of this platform/],
  ];

  it.each(cases)("a withdrawal to %s is 400 naming walletAddress, over REST and GraphQL, nothing debited", async (_name, addressOf, reason) => {
    const userId = await fundedUser(live, "10");
    const address = await addressOf(await walletOf(live, userId));
    const before = await holdings(live, userId);

    const res = await rest(server, "POST", "/v1/withdrawals/usdc", { headers: live.headers, body: usdcBody(userId, address) });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body).toMatchObject({ code: "BAD_USER_INPUT", param: "walletAddress" });
    expect(res.body.error).toMatch(/^walletAddress/);
    expect(res.body.error).toMatch(reason);

    const viaGraphql = await gql(server, WITHDRAW_USDC, { input: usdcBody(userId, address, "5") }, live.headers);
    expect(viaGraphql.body.errors?.[0]).toMatchObject({ extensions: { code: "BAD_USER_INPUT", param: "walletAddress" } });
    expect(viaGraphql.body.errors?.[0].message).toMatch(reason);

    expect(await holdings(live, userId)).toEqual(before);
    expect(before.balances.USDC).toBe("10");
  });

  it("a withdrawal to the user's own deposit address is refused too (a round trip that costs gas and moves nothing)", async () => {
    const userId = await fundedUser(live, "10");
    const own = await walletOf(live, userId);
    const res = await rest(server, "POST", "/v1/withdrawals/usdc", { headers: live.headers, body: usdcBody(userId, own) });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ param: "walletAddress", error: expect.stringMatching(/deposit address of this platform/) });
    expect((await balancesOf(server, live, userId)).USDC).toBe("10");
  });

  it.each(cases)("a forwarding virtual account to %s is 400 naming address, over REST and GraphQL, nothing created", async (_name, addressOf, reason) => {
    const userId = await createUser(server, live);
    const address = await addressOf(await walletOf(live, userId));

    const res = await rest(server, "POST", "/v1/virtual-account/usd", { headers: live.headers, body: forwardingAccount(userId, address) });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body).toMatchObject({ code: "BAD_USER_INPUT", param: "address" });
    expect(res.body.error).toMatch(reason);

    const viaGraphql = await gql(server, CREATE_ACCOUNT, { input: { currency: "USD", ...forwardingAccount(userId, address) } }, live.headers);
    expect(viaGraphql.body.errors?.[0]).toMatchObject({ extensions: { code: "BAD_USER_INPUT", param: "address" } });
    expect(viaGraphql.body.errors?.[0].message).toMatch(reason);

    expect((await holdings(live, userId)).virtualAccounts).toEqual([]);
  });

  it("a virtual account into the user's own custodial wallet is accepted: nothing is forwarded, the money stays in the balance", async () => {
    const userId = await createUser(server, live);
    const own = await walletOf(live, userId);
    const res = await rest(server, "POST", "/v1/virtual-account/usd", { headers: live.headers, body: forwardingAccount(userId, own.toLowerCase()) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.destinationAddress).toBe(own);
  });

  it("an outside address is accepted, in any of the three spellings", async () => {
    const outside = freshAddress();
    for (const spelling of [outside, outside.toLowerCase(), `0x${outside.slice(2).toUpperCase()}`]) {
      const userId = await createUser(server, live);
      const res = await rest(server, "POST", "/v1/virtual-account/usd", { headers: live.headers, body: forwardingAccount(userId, spelling) });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.destinationAddress).toBe(outside);
    }
  });
});

describe("the minimum and the network fee of a withdrawal on a chain", () => {
  const fees = async (clientId: string) => {
    const { _sum } = await server.app.db.prisma.ledgerAccount.aggregate({ where: { clientId, code: "FEES", currency: "USDC" }, _sum: { balance: true } });
    return new Decimal(_sum.balance?.toString() ?? "0").toFixed();
  };
  const withdrawalIn = (reference: string, ready: (w: { status: string; transactionHash?: string }) => boolean) =>
    until(async () => {
      const res = await rest(server, "GET", `/v1/withdrawals/${reference}`, { headers: live.headers });
      return ready(res.body) ? res.body : undefined;
    }, `withdrawal ${reference}`);

  it("below the minimum: 400 naming amount with the minimum, over REST and GraphQL, nothing debited", async () => {
    const userId = await fundedUser(live, "10");
    const res = await rest(server, "POST", "/v1/withdrawals/usdc", { headers: live.headers, body: usdcBody(userId, freshAddress(), 1.999999) });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ param: "amount", error: `amount must be at least ${MIN} USDC on BASE` });
    const viaGraphql = await gql(server, WITHDRAW_USDC, { input: usdcBody(userId, freshAddress(), "1.999999") }, live.headers);
    expect(viaGraphql.body.errors?.[0]).toMatchObject({ message: `amount must be at least ${MIN} USDC on BASE`, extensions: { code: "BAD_USER_INPUT", param: "amount" } });
    expect((await balancesOf(server, live, userId)).USDC).toBe("10");
  });

  it("at the minimum: the fee is debited on top, booked once to FEES, and the transfer carries the amount whole", async () => {
    const userId = await fundedUser(live, "2.25");
    const to = freshAddress();
    const feesBefore = await fees(live.clientId);
    const res = await rest(server, "POST", "/v1/withdrawals/usdc", { headers: live.headers, body: usdcBody(userId, to, 2) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ amount: 2, fee: 0.25, networkFee: 0.25 });
    expect(res.body.developerFee).toBeUndefined();

    expect((await balancesOf(server, live, userId)).USDC).toBe("0");
    const entries = (await ledgerOf(server, live, userId)).filter((entry) => entry.referenceId === res.body.reference);
    expect(entries.map(({ type, amount }) => [type, amount]).sort()).toEqual([["FEE", "-0.25"], ["WITHDRAWAL", "-2"]]);
    expect(new Decimal(await fees(live.clientId)).minus(feesBefore).toFixed()).toBe(FEE);

    await withdrawalIn(res.body.reference, (w) => w.status === "COMPLETED");
    expect((await token.transfersTo(to)).map((t) => t.value)).toEqual([2_000_000n]);
    const viaGraphql = await gql(server, `query ($r: ID!) { withdrawal(reference: $r) { amount fee networkFee developerFee } }`, { r: res.body.reference }, live.headers);
    expect(viaGraphql.body.data?.withdrawal).toEqual({ amount: "2", fee: "0.25", networkFee: "0.25", developerFee: "0" });
    await expectLedgerInvariants(server, live.clientId);
  });

  it("the balance must cover the amount, the developer fee and the network fee together", async () => {
    const userId = await fundedUser(live, "2.349999");
    const res = await rest(server, "POST", "/v1/withdrawals/usdc", { headers: live.headers, body: { ...usdcBody(userId, freshAddress(), 2), developerFee: 0.1 } });
    expect(res.status).toBe(500);
    expect((await balancesOf(server, live, userId)).USDC).toBe("2.349999");
  });

  it("a withdrawal the token refuses (FAILED) gives the fee back with the amount, exactly once", async () => {
    const userId = await fundedUser(live, "3");
    const feesBefore = await fees(live.clientId);
    await token.setPaused(true);
    try {
      const res = await rest(server, "POST", "/v1/withdrawals/usdc", { headers: live.headers, body: { ...usdcBody(userId, freshAddress(), 2), developerFee: 0.5 } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({ fee: 0.75, networkFee: 0.25, developerFee: 0.5 });
      await withdrawalIn(res.body.reference, (w) => w.status === "FAILED");
    } finally {
      await token.setPaused(false);
    }
    expect((await balancesOf(server, live, userId)).USDC).toBe("3");
    expect(await fees(live.clientId)).toBe(feesBefore);
    await expectLedgerInvariants(server, live.clientId);
  });

  it("a simulated network (test mode's sandbox) spends no gas: no minimum and no fee", async () => {
    const userId = await fundedUser(test, "1");
    const res = await rest(server, "POST", "/v1/withdrawals/usdc", { headers: test.headers, body: { userId, amount: 0.000001, walletAddress: freshAddress(), network: "ETHEREUM", chainId: 1 } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.fee).toBe(0);
    expect(res.body.networkFee).toBeUndefined();
    expect((await balancesOf(server, test, userId)).USDC).toBe("0.999999");
  });
});

describe("the settings", () => {
  const baseOf = (env: Record<string, string>, livemode: boolean) => {
    const { settings, issues } = parseChainSettings(env);
    expect(issues).toEqual([]);
    return settings.networks.find((n) => n.name === "BASE" && n.livemode === livemode)!;
  };

  it("every live network has a non-zero minimum and fee by default, for each token", () => {
    for (const network of parseChainSettings({}).settings.networks) {
      for (const rule of Object.values(network.withdrawals)) {
        expect(Number(rule.min)).toBeGreaterThan(0);
        expect(Number(rule.fee)).toBeGreaterThan(0);
        expect(rule).toEqual(DEFAULT_WITHDRAWAL_RULES[network.name]);
      }
    }
  });

  it("CHAIN_TEST_ names set the test chain's rule, CHAIN_ names the live one's", () => {
    const env = { CHAIN_TEST_NETWORK_FEE_BASE_USDC: "0.3", CHAIN_MIN_WITHDRAWAL_BASE_USDC: "7.5" };
    expect(baseOf(env, false).withdrawals.USDC).toEqual({ min: DEFAULT_WITHDRAWAL_RULES.BASE.min, fee: "0.3" });
    expect(baseOf(env, true).withdrawals.USDC).toEqual({ min: "7.5", fee: DEFAULT_WITHDRAWAL_RULES.BASE.fee });
    expect(baseOf(env, true).withdrawals.USDT).toEqual(DEFAULT_WITHDRAWAL_RULES.BASE);
  });

  it.each([
    ["CHAIN_NETWORK_FEE_BASE_USDC", "-1", /must be a USDC amount ≥ 0 with at most 6 decimals/],
    ["CHAIN_NETWORK_FEE_BASE_USDC", "0.0000001", /must be a USDC amount ≥ 0 with at most 6 decimals/],
    ["CHAIN_MIN_WITHDRAWAL_BASE_USDC", "1e1", /must be a USDC amount/],
    ["CHAIN_TEST_MIN_WITHDRAWAL_BASSE_USDC", "1", /BASSE is not a network/],
    ["CHAIN_NETWORK_FEE_BASE_XYZ", "1", /the token must be one of USDC, USDT, DAI/],
  ])("%s=%s is refused at start", (name, value, reason) => {
    const { issues } = parseChainSettings({ [name]: value });
    expect(issues.join("\n")).toMatch(new RegExp(`${name}: ${reason.source}`));
  });
});


describe("sweeps never cost more than they move", () => {
  const network = (fee: string) => ({ tokens: { USDC: token.address }, withdrawals: { USDC: { min: "1", fee }, USDT: { min: "1", fee }, DAI: { min: "1", fee } } });

  it("a sweep moves at least CHAIN_SWEEP_MIN, and never less than two network fees of its token (a top-up and the sweep)", () => {
    expect(sweepThresholds("10", network("0.2")).get(token.address)?.toFixed()).toBe("10");
    expect(sweepThresholds("1", network("0.75")).get(token.address)?.toFixed()).toBe("1.5");
    expect(sweepThresholds("1", network("0.75")).size).toBe(1);
  });
});
