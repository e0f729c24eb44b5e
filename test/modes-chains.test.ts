import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Decimal } from "decimal.js";
import { erc20Abi, parseEventLogs, type Address } from "viem";
import { newVirtualAccount, simulateDeposit } from "./support/deposits.js";
import { createUser, rest } from "./support/http.js";
import { balanceOf } from "./support/withdrawals.js";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";
import { fund } from "./support/ledger.js";
import { needs, REQUIREMENTS } from "./support/requirements.js";
import { deployToken, freshAddress, startAnvil, testCustody, type Anvil, type Token } from "./support/chain.js";
import { until } from "./support/until.js";
import { patient } from "./support/patience.js";

// SPEC §15 on two real chains at once: BASE is live on one anvil (CHAIN_RPC_URL_BASE) and a test chain
// on another (CHAIN_TEST_RPC_URL_BASE), each with its own token and its own treasury (live
// m/44'/60'/1'/0/0, test m/44'/60'/3'/0/0, derived here with viem). Play money (a sandbox NGN deposit,
// converted to USDC) withdrawn with a test key lands on the test chain only; the live chain's token logs
// show no transfer at all. What happened on each chain is read from that token's logs, never from the
// product's records.
const { masterKey: MASTER_KEY, treasury: LIVE_TREASURY, testTreasury: TEST_TREASURY } = testCustody(21);
const ETH = 10n ** 18n;
const units = (amount: string) => BigInt(new Decimal(amount).times(1e6).toFixed(0));

type Chain = { anvil: Anvil; token: Token };
let live: Chain;
let test: Chain;
let server: TestServer;

async function chainWith(treasury: Address): Promise<Chain> {
  const anvil = await startAnvil();
  const token = await deployToken(anvil, { symbol: "USDC", decimals: 6 });
  await token.mint(treasury, units("1000"));
  await anvil.setBalance(treasury, 10n * ETH);
  return { anvil, token };
}

beforeAll(async () => {
  [live, test] = await Promise.all([chainWith(LIVE_TREASURY), chainWith(TEST_TREASURY)]);
  const chainEnv = {
    CHAIN_RPC_URL_BASE: live.anvil.url,
    CHAIN_TOKEN_BASE_USDC: live.token.address,
    CHAIN_CONFIRMATIONS_BASE: "1",
    CHAIN_TEST_RPC_URL_BASE: test.anvil.url,
    CHAIN_TEST_TOKEN_BASE_USDC: test.token.address,
    CHAIN_TEST_CONFIRMATIONS_BASE: "1",
    // Minimums and network fees are another file's subject (chain-destinations): none here.
    CHAIN_MIN_WITHDRAWAL_BASE_USDC: "0",
    CHAIN_NETWORK_FEE_BASE_USDC: "0",
    CHAIN_TEST_MIN_WITHDRAWAL_BASE_USDC: "0",
    CHAIN_TEST_NETWORK_FEE_BASE_USDC: "0",
    CHAIN_POLL_MS: "100",
    CHAIN_RPC_TIMEOUT_MS: "1000",
  };
  server = await startServer({ env: { ...chainEnv, CUSTODIAN_MASTER_KEY: MASTER_KEY } });
  const { chain } = server.app.services;
  await until(async () => chain.chainIdOf("live", "BASE") !== undefined && chain.chainIdOf("test", "BASE") !== undefined, "both RPCs' chain ids");
}, patient(60_000));

afterAll(async () => {
  await server?.stop();
  await Promise.all([live?.anvil.stop(), test?.anvil.stop()]);
});

/** Every Transfer log of a chain's token, read from its node. */
async function transfersOn({ anvil, token }: Chain) {
  const logs = await anvil.client.getLogs({ address: token.address, fromBlock: 0n, toBlock: "latest" });
  return parseEventLogs({ abi: erc20Abi, logs, eventName: "Transfer" }).map((log) => ({ from: log.args.from, to: log.args.to, value: log.args.value }));
}

const withdrawUsdc = (tenant: Tenant, userId: string, amount: number, to: Address, chainId: number) =>
  rest(server, "POST", "/v1/withdrawals/usdc", { headers: tenant.headers, body: { userId, amount, walletAddress: to, network: "BASE", chainId } });

/** Play money: a sandbox NGN deposit to the user's NGN virtual account, settled and converted to USDC. */
async function playUsdc(tenant: Tenant, userId: string): Promise<void> {
  await newVirtualAccount(server, tenant, userId, "NGN");
  const deposit = await simulateDeposit(server, tenant, { userId, currency: "NGN", amount: 500000 });
  const completed = await rest(server, "POST", `/v1/sandbox/deposits/${deposit.id}/complete`, { headers: tenant.headers });
  expect(completed.status, JSON.stringify(completed.body)).toBe(200);
  // The virtual account converts what it receives into its destination asset (USDC) and, the
  // destination being the user's own wallet, keeps it in the user's balance.
  expect(Number(await balanceOf(server, tenant, userId, "USDC"))).toBeGreaterThan(5);
}

describe("test mode and live mode on two chains", () => {
  it("play money withdrawn with a test key leaves from the test treasury on the test chain, and nothing moves on the live chain", async () => {
    const tenant = await newTenant(server, "test");
    const userId = await createUser(server, tenant);
    await playUsdc(tenant, userId);
    const to = freshAddress();
    const testChainId = server.app.services.chain.chainIdOf("test", "BASE")!;
    const withdrawal = await withdrawUsdc(tenant, userId, 5, to, testChainId);
    expect(withdrawal.status, JSON.stringify(withdrawal.body)).toBe(200);
    expect(withdrawal.body.livemode ?? false).toBe(false);
    await until(async () => {
      const found = (await rest(server, "GET", `/v1/withdrawals/${withdrawal.body.reference}`, { headers: tenant.headers })).body;
      if (found.status === "COMPLETED") return found;
      await test.anvil.mine(1);
      return undefined;
    }, "the test-mode withdrawal COMPLETED on the test chain");
    expect(await transfersOn(test)).toContainEqual({ from: TEST_TREASURY, to, value: units("5") });
    const onLive = (await transfersOn(live)).filter((transfer) => transfer.from === LIVE_TREASURY);
    expect(onLive).toEqual([]);
  });

  it("a test key asking for the live chain's id is refused: in test mode BASE is the test chain", async () => {
    const tenant = await newTenant(server, "test");
    const userId = await createUser(server, tenant);
    await playUsdc(tenant, userId);
    const liveChainId = server.app.services.chain.chainIdOf("live", "BASE")!;
    const refused = await withdrawUsdc(tenant, userId, 5, freshAddress(), liveChainId);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatch(/chainId/);
  });

  it("live mode has no play money: sandbox helpers are 403 TEST_MODE_ONLY, and a withdrawal with nothing credited is refused, sending nothing", async () => {
    const tenant = await newTenant(server, "live");
    const userId = await createUser(server, tenant);
    const helper = await rest(server, "POST", "/v1/sandbox/deposits", { headers: tenant.headers, body: { userId, currency: "NGN", amount: 500000 } });
    expect(helper.status).toBe(403);
    expect(helper.body.code).toBe("TEST_MODE_ONLY");
    const before = (await transfersOn(live)).length;
    const refused = await withdrawUsdc(tenant, userId, 5, freshAddress(), server.app.services.chain.chainIdOf("live", "BASE")!);
    expect(refused.body.code, JSON.stringify(refused.body)).toBe("INSUFFICIENT_FUNDS");
    expect((await transfersOn(live)).length).toBe(before);
  });

  it("a test-mode wallet's address is derived on the test account and a live one's on the live account: neither chain credits the other mode", async () => {
    const [testTenant, liveTenant] = [await newTenant(server, "test"), await newTenant(server, "live")];
    const wallets = await Promise.all(
      [testTenant, liveTenant].map(async (tenant) => {
        const userId = await createUser(server, tenant);
        const res = await rest(server, "POST", "/v1/wallet", { headers: tenant.headers, body: { userId } });
        expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
        return { tenant, userId, address: res.body.address as Address };
      }),
    );
    const [testWallet, liveWallet] = wallets;
    const rows = await server.app.db.prisma.custodianAddress.findMany({ where: { address: { in: [testWallet.address, liveWallet.address] } } });
    expect(Object.fromEntries(rows.map((row) => [row.address, row.account]))).toEqual({ [testWallet.address]: 2, [liveWallet.address]: 0 });
    // The same transfer to the live wallet, made on the test chain, is no deposit of anyone's.
    await test.token.mint(liveWallet.address, units("3"));
    await live.token.mint(liveWallet.address, units("4"));
    await until(async () => {
      const deposits = (await rest(server, "GET", `/v1/transactions/deposits/${liveWallet.userId}`, { headers: liveWallet.tenant.headers })).body as { amount: number }[];
      if (deposits.length > 0) return deposits;
      await live.anvil.mine(1);
      return undefined;
    }, "the live deposit");
    await test.anvil.mine(3);
    const deposits = (await rest(server, "GET", `/v1/transactions/deposits/${liveWallet.userId}`, { headers: liveWallet.tenant.headers })).body as { amount: number }[];
    expect(deposits.map((deposit) => deposit.amount)).toEqual([4]);
  });

  it("a cancel racing the sender wins or loses whole: a cancelled withdrawal sends nothing and is reversed once, a signed one is sent and kept (PostgreSQL)", needs(REQUIREMENTS.postgres), async () => {
    const tenant = await newTenant(server, "live");
    const userId = await createUser(server, tenant);
    await fund(server, tenant.clientId, userId, "USDC", "100");
    const chainId = server.app.services.chain.chainIdOf("live", "BASE")!;
    const destinations = Array.from({ length: 10 }, () => freshAddress());
    const outcomes = await Promise.all(
      destinations.map(async (to) => {
        const created = await withdrawUsdc(tenant, userId, 1, to, chainId);
        expect(created.status, JSON.stringify(created.body)).toBe(200);
        const cancel = await rest(server, "POST", `/v1/withdrawals/${created.body.reference}/cancel`, { headers: tenant.headers });
        expect([200, 409]).toContain(cancel.status);
        return { to, reference: created.body.reference as string, cancelled: cancel.status === 200 };
      }),
    );
    const settled = await until(async () => {
      const all = await Promise.all(outcomes.map(async (outcome) => (await rest(server, "GET", `/v1/withdrawals/${outcome.reference}`, { headers: tenant.headers })).body.status as string));
      if (all.every((status) => status === "COMPLETED" || status === "CANCELLED")) return all;
      await live.anvil.mine(1);
      return undefined;
    }, "every withdrawal COMPLETED or CANCELLED");
    const transfers = await transfersOn(live);
    outcomes.forEach((outcome, i) => {
      expect(settled[i]).toBe(outcome.cancelled ? "CANCELLED" : "COMPLETED");
      expect(transfers.filter((transfer) => transfer.to === outcome.to).length).toBe(outcome.cancelled ? 0 : 1);
    });
    const sent = outcomes.filter((outcome) => !outcome.cancelled).length;
    expect(await balanceOf(server, tenant, userId, "USDC")).toBe(String(100 - sent));
  });
});
