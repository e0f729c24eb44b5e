import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Decimal } from "decimal.js";
import type { Address, Hex } from "viem";
import { HDKey, hdKeyToAccount } from "viem/accounts";
import { ledgerOf, postWebhook } from "./support/deposits.js";
import { allEvents } from "./support/events.js";
import { createUser, gql, rest } from "./support/http.js";
import { newTenant, startServer, testDatabaseUrl, type Tenant, type TestServer } from "./support/server.js";
import { subscriptionsOf } from "./support/subscriptions.js";
import { startTcpProxy, type TcpProxy } from "./support/tcp-proxy.js";
import { until } from "./support/until.js";
import { chainsReport, deployToken, liveBaseEnv, startAnvil, type Anvil, type Token } from "./support/chain.js";
import { patient } from "./support/patience.js";

// A live BASE on a real anvil (behind a TCP proxy, so one test can take the RPC away), with our
// token as its USDC, three confirmations and a 100 ms poll. Runs on both databases.
const CONFIRMATIONS = 3;
let anvil: Anvil;
let token: Token;
let otherToken: Token;
let proxy: TcpProxy;
let server: TestServer;
let tenant: Tenant;
let sender: Address;
const subscriptions = subscriptionsOf(() => server.url);
/** The deployment's master key: every address of the platform derives from it (viem's own BIP-32 here, not the product's). */
const MASTER_KEY = HDKey.fromMasterSeed(new Uint8Array(64).fill(7)).privateExtendedKey;
const chainEnv = () => liveBaseEnv(anvil, token, { CHAIN_RPC_URL_BASE: `http://127.0.0.1:${proxy.port}`, CHAIN_CONFIRMATIONS_BASE: String(CONFIRMATIONS) });

beforeAll(async () => {
  anvil = await startAnvil();
  token = await deployToken(anvil, { symbol: "USDC", decimals: 6 });
  otherToken = await deployToken(anvil, { name: "Other", symbol: "OTHER", decimals: 6 });
  sender = anvil.accounts[1];
  await token.mint(sender, 1_000_000_000_000n);
  await otherToken.mint(sender, 1_000_000_000_000n);
  proxy = await startTcpProxy({ host: "127.0.0.1", port: Number(new URL(anvil.url).port) });
  server = await startServer({ env: { ...chainEnv(), CUSTODIAN_MASTER_KEY: MASTER_KEY } });
  tenant = await newTenant(server, "live");
  await until(async () => (await networks()).find((n) => n.network === "BASE")?.syncedBlock != null, "the watcher to start");
}, patient(60_000));

afterAll(async () => {
  await server?.stop();
  await proxy?.close();
  await anvil?.stop();
});

type Deposit = { id: string; status: string; amount: number; currency: string; eventId: string; transactionHash?: string; tokenAddress?: string; chainId?: number };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Long enough for several watcher passes (100 ms apart). */
const SEVERAL_POLLS = 800;

async function networks() {
  const res = await rest(server, "GET", "/v1/networks", { headers: tenant.headers });
  expect(res.status).toBe(200);
  return res.body as { network: string; chainId: number | null; mode: string; confirmations: number; tokens: Record<string, string>; headBlock: number | null; syncedBlock: number | null }[];
}

async function custodialUser() {
  const userId = await createUser(server, tenant);
  const res = await rest(server, "POST", "/v1/wallet", { headers: tenant.headers, body: { userId } });
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  return { userId, address: res.body.address as Address };
}

async function depositsOf(userId: string): Promise<Deposit[]> {
  const res = await rest(server, "GET", `/v1/transactions/deposits/${userId}`, { headers: tenant.headers });
  expect(res.status).toBe(200);
  return res.body.data ?? res.body;
}

const depositWith = (userId: string, status: string) => until(async () => (await depositsOf(userId)).find((d) => d.status === status), `a ${status} deposit`);

async function balanceOf(userId: string, currency: string) {
  const res = await rest(server, "GET", `/v1/balances/${userId}`, { headers: tenant.headers });
  expect(res.status).toBe(200);
  return (res.body.balances as { currency: string; posted: number; pending: number; available: number }[]).find((b) => b.currency === currency);
}

/** Units of the token's 6 decimals. */
const units = (amount: string) => BigInt(new Decimal(amount).times(1e6).toFixed(0));

describe("live networks", () => {
  it("GET /v1/networks and GraphQL networks show BASE live on the RPC's chain id, the others sandbox", async () => {
    const list = await networks();
    expect(list.map((n) => n.network)).toEqual(["ETHEREUM", "POLYGON", "BASE", "ARBITRUM", "OPTIMISM"]);
    const base = list.find((n) => n.network === "BASE")!;
    expect(base).toMatchObject({ chainId: anvil.chainId, mode: "live", confirmations: CONFIRMATIONS, tokens: { USDC: token.address } });
    expect(base.headBlock).toBeGreaterThanOrEqual(base.syncedBlock!);
    expect(list.find((n) => n.network === "POLYGON")).toEqual({
      network: "POLYGON", chainId: 137, mode: "sandbox", confirmations: 256, tokens: { USDC: "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359" },
      tokenAvailability: { USDC: { available: true, reason: null } }, headBlock: null, syncedBlock: null,
    });
    const graphql = await gql(server, "{ networks { network chainId mode confirmations tokens { symbol address } headBlock syncedBlock } }", {}, tenant.headers);
    expect(graphql.body.errors).toBeUndefined();
    const graphqlBase = graphql.body.data.networks.find((n: { network: string }) => n.network === "BASE");
    expect(graphqlBase).toMatchObject({ chainId: anvil.chainId, mode: "live", confirmations: CONFIRMATIONS, tokens: [{ symbol: "USDC", address: token.address }] });
    expect((await rest(server, "GET", "/v1/networks")).status).toBe(401);
  });

  it("live mode has no sandbox chain: the helper is 403 TEST_MODE_ONLY, and the sandbox chain's signed event to a live wallet is refused", async () => {
    const { userId } = await custodialUser();
    for (const chainId of [8453, anvil.chainId]) {
      const res = await rest(server, "POST", "/v1/sandbox/deposits", { headers: tenant.headers, body: { userId, currency: "USDC", amount: 5, chainId } });
      expect(res.status, JSON.stringify(res.body)).toBe(403);
      expect(res.body.code).toBe("TEST_MODE_ONLY");
    }
    // Nor does the sandbox chain's own signed provider event reach a live wallet.
    const { address } = await custodialUser();
    const transactionHash = `0x${"ab".repeat(32)}`;
    const event = {
      id: `evt_${crypto.randomUUID()}`,
      type: "deposit.received",
      data: { reference: `${transactionHash}:0`, address, amount: "5", currency: "USDC", tokenAddress: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", transactionHash, chainId: 8453 },
    };
    const webhook = await postWebhook(server, "sandbox-chain", event);
    expect(webhook.status).toBe(400);
    expect(webhook.body.error).toMatch(/live-mode wallet/);
    // In test mode BASE is simulated here (no CHAIN_TEST_RPC_URL_BASE): the sandbox takes it.
    const testTenant = await newTenant(server, "test");
    const testUser = await createUser(server, testTenant);
    const sandbox = await rest(server, "POST", "/v1/sandbox/deposits", { headers: testTenant.headers, body: { userId: testUser, currency: "USDC", amount: 5, chainId: 8453 } });
    expect(sandbox.status, JSON.stringify(sandbox.body)).toBe(201);
  });
});

describe("network and chainId agreement (§4) uses a live network's RPC chain id", () => {
  const withdrawal = (userId: string, network: string, chainId: number) => ({ userId, amount: 1, walletAddress: "0x71C7656EC7ab88b098defB751B7401B5f6d8976F", network, chainId });
  const cases = [
    { name: "a live network with §4's listed id", network: "BASE", chainId: () => 8453, refusal: () => `chainId must be ${anvil.chainId} for BASE` },
    { name: "a live network with its RPC's id", network: "BASE", chainId: () => anvil.chainId, refusal: () => null },
    { name: "a network not live, with §4's id: live mode cannot use it", network: "POLYGON", chainId: () => 137, refusal: () => "POLYGON is not live on this server" },
    { name: "a network not live, with another id", network: "POLYGON", chainId: () => anvil.chainId, refusal: () => "chainId must be 137 for POLYGON" },
  ];
  it.each(cases)("$name, on REST and GraphQL", async ({ network, chainId, refusal }) => {
    const userId = await createUser(server, tenant);
    const body = withdrawal(userId, network, chainId());
    const viaRest = await rest(server, "POST", "/v1/withdrawals/usdc", { headers: tenant.headers, body });
    const viaGraphql = await gql(server, "mutation ($input: WithdrawUsdcInput!) { withdrawUsdc(input: $input) { reference } }", { input: body }, tenant.headers);
    const expected = refusal();
    if (expected) {
      expect(viaRest.status).toBe(400);
      expect(viaRest.body.error).toContain(expected);
      expect(viaGraphql.body.errors?.[0]).toMatchObject({ message: expect.stringContaining(expected), extensions: { code: "BAD_USER_INPUT" } });
    } else {
      // Past validation: the unfunded user is refused for its balance (the contract's 500 on REST).
      expect(viaRest.status).toBe(500);
      expect(viaGraphql.body.errors?.[0].extensions?.code).toBe("INSUFFICIENT_FUNDS");
    }
  });
});

describe("custody", () => {
  it("deposit addresses are m/44'/60'/0'/0/{index} and the treasury m/44'/60'/1'/0/0 of the master key; npm run chains shows the treasury's balances", async () => {
    const { address } = await custodialUser();
    const { derivationIndex } = await server.app.db.prisma.custodianAddress.findUniqueOrThrow({ where: { address } });
    const master = HDKey.fromExtendedKey(MASTER_KEY);
    expect(hdKeyToAccount(master, { accountIndex: 0, addressIndex: derivationIndex }).address).toBe(address);
    const treasury = hdKeyToAccount(master, { accountIndex: 1, addressIndex: 0 }).address;
    await anvil.rpc("anvil_setBalance", [treasury, "0xde0b6b3a7640000"]);
    await token.mint(treasury, units("5.5"));
    const run = await chainsReport({ ...chainEnv(), CUSTODIAN_MASTER_KEY: MASTER_KEY });
    const [base] = run.networks;
    const head = Number(await anvil.client.getBlockNumber());
    expect(base).toMatchObject({ network: "BASE", rpc: "up", chainId: anvil.chainId, confirmations: CONFIRMATIONS, treasury: { address: treasury, native: "1", tokens: { USDC: "5.5" } } });
    expect(base.headBlock).toBeGreaterThanOrEqual(head);
    // The synced block is the database's: on the embedded one, held in this test's memory, the script sees none.
    if (testDatabaseUrl) expect(base.syncedBlock).toBeGreaterThan(0);
    expect(base.lag === null || base.lag >= 0).toBe(true);
    expect(run.stdout).not.toContain(MASTER_KEY);
  }, patient(60_000));
});

describe("deposits from the chain", () => {
  it("a transfer is PENDING at first sight (pending, not posted), one block short stays PENDING, and completes once exactly at depth", async () => {
    const { userId, address } = await custodialUser();
    const updates = await subscriptions.ws({ "x-api-key": tenant.apiKey }, "subscription ($u: ID) { depositUpdated(userId: $u) { id status amount transactionHash } }", { u: userId });
    const hash = await token.transfer(sender, address, units("12.345678"));
    const pending = await depositWith(userId, "PENDING");
    const receipt = await anvil.client.getTransactionReceipt({ hash });
    expect(pending).toMatchObject({
      amount: 12.345678, currency: "USDC", transactionHash: hash, tokenAddress: token.address, chainId: anvil.chainId, eventId: `${hash}:${receipt.logs[0].logIndex}`,
    });
    expect(await balanceOf(userId, "USDC")).toMatchObject({ posted: 0, pending: 12.345678, available: 0 });
    expect((await updates.take()).data.depositUpdated).toMatchObject({ id: pending.id, status: "PENDING", transactionHash: hash });
    // Only the chain settles it: the sandbox helpers refuse a live key.
    for (const action of ["complete", "fail"]) {
      const forced = await rest(server, "POST", `/v1/sandbox/deposits/${pending.id}/${action}`, { headers: tenant.headers });
      expect(forced.status).toBe(403);
      expect(forced.body.code).toBe("TEST_MODE_ONLY");
    }

    await anvil.mine(CONFIRMATIONS - 2); // depth CONFIRMATIONS - 1: one short
    await sleep(SEVERAL_POLLS);
    expect((await depositsOf(userId)).map((d) => d.status)).toEqual(["PENDING"]);

    await anvil.mine(1); // depth CONFIRMATIONS: exactly at it
    await depositWith(userId, "COMPLETED");
    expect(await balanceOf(userId, "USDC")).toMatchObject({ posted: 12.345678, pending: 12.345678, available: 12.345678 });
    expect((await updates.take()).data.depositUpdated).toMatchObject({ id: pending.id, status: "COMPLETED" });
    await anvil.mine(5);
    await sleep(SEVERAL_POLLS);
    expect((await ledgerOf(server, tenant, userId)).filter((entry) => entry.type === "DEPOSIT")).toEqual([
      { type: "DEPOSIT", currency: "USDC", amount: "12.345678", referenceId: pending.id },
    ]);
    const events = (await allEvents(server, tenant)).filter((event) => event.data.object.id === pending.id);
    expect(events.map((event) => [event.type, event.data.object.status])).toEqual([["deposit.created", "PENDING"], ["deposit.completed", "COMPLETED"]]);
  });

  it("a mint (Transfer from 0x0) to a custodial address is a deposit", async () => {
    const { userId, address } = await custodialUser();
    const hash = await token.mint(address, units("3"));
    expect(await depositWith(userId, "PENDING")).toMatchObject({ amount: 3, transactionHash: hash });
  });

  it("another token, another address and a zero transfer are not deposits", async () => {
    const { userId, address } = await custodialUser();
    const stranger = "0x000000000000000000000000000000000000dEaD";
    const notDeposits = [
      await otherToken.transfer(sender, address, units("7")),
      await token.transfer(sender, stranger, units("7")),
      await token.transfer(sender, address, 0n),
    ];
    const marker = await token.transfer(sender, address, units("1"));
    const deposit = await depositWith(userId, "PENDING");
    expect(deposit.transactionHash).toBe(marker);
    expect(await depositsOf(userId)).toHaveLength(1);
    expect(await server.app.db.prisma.deposit.count({ where: { transactionHash: { in: notDeposits } } })).toBe(0);
  });

  it("a reorg that removes the block (anvil_rollback): FAILED at depth, never credited", async () => {
    const { userId, address } = await custodialUser();
    await token.transfer(sender, address, units("50"));
    const pending = await depositWith(userId, "PENDING");
    await anvil.rollback(1);
    await anvil.mine(CONFIRMATIONS);
    const failed = await depositWith(userId, "FAILED");
    expect(failed.id).toBe(pending.id);
    const graphql = await gql(server, "query ($id: ID!) { deposit(id: $id) { status failureReason } }", { id: pending.id }, tenant.headers);
    expect(graphql.body.data.deposit.failureReason).toMatch(/left the canonical chain/);
    expect(await token.transfersTo(address)).toEqual([]);
    expect(await ledgerOf(server, tenant, userId)).toEqual([]);
    expect(await balanceOf(userId, "USDC")).toBeUndefined();
    const types = (await allEvents(server, tenant)).filter((event) => event.data.object.id === pending.id).map((event) => event.type);
    expect(types).toEqual(["deposit.created", "deposit.failed"]);
  });

  it("the same transaction mined again in another block after a reorg (anvil_reorg): the same deposit, at its new depth, credited once", async () => {
    const { userId, address } = await custodialUser();
    const hash = await token.transfer(sender, address, units("20"));
    const raw = (await anvil.rpc("eth_getRawTransactionByHash", [hash])) as Hex;
    const pending = await depositWith(userId, "PENDING");
    await anvil.mine(1); // depth 2
    await sleep(SEVERAL_POLLS);
    // Both blocks are replaced; the transfer is mined again in the second one (one block later than before).
    await anvil.reorg(2, [[raw, 1]]);
    const moved = await anvil.client.getTransactionReceipt({ hash });
    await sleep(SEVERAL_POLLS);
    await anvil.mine(CONFIRMATIONS - 2); // the old block would be deep enough now; the new one is one short
    await sleep(SEVERAL_POLLS);
    expect((await depositsOf(userId)).map((d) => [d.id, d.status])).toEqual([[pending.id, "PENDING"]]);
    await anvil.mine(1);
    await depositWith(userId, "COMPLETED");
    await anvil.mine(CONFIRMATIONS);
    await sleep(SEVERAL_POLLS);
    expect(await depositsOf(userId)).toHaveLength(1);
    expect(moved.status).toBe("success");
    expect(await token.transfersTo(address)).toHaveLength(1);
    expect((await ledgerOf(server, tenant, userId)).filter((entry) => entry.type === "DEPOSIT")).toEqual([
      { type: "DEPOSIT", currency: "USDC", amount: "20", referenceId: pending.id },
    ]);
  });

  it("an RPC that stops answering: requests are not held up, the network lags, then it catches up with nothing missed", async () => {
    const { userId, address } = await custodialUser();
    await proxy.cut();
    try {
      const before = (await networks()).find((n) => n.network === "BASE")!;
      await token.transfer(sender, address, units("9"));
      await anvil.mine(CONFIRMATIONS);
      await sleep(SEVERAL_POLLS * 2);
      const started = Date.now();
      const during = (await networks()).find((n) => n.network === "BASE")!;
      expect(Date.now() - started).toBeLessThan(500);
      expect(during.syncedBlock).toBe(before.syncedBlock);
      expect(await depositsOf(userId)).toEqual([]);
      expect((await rest(server, "GET", "/readyz")).status).toBe(200);
    } finally {
      await proxy.restore();
    }
    // Back: the transfer, already deep enough, is recorded and completed.
    await until(async () => (await depositsOf(userId)).find((d) => d.status === "COMPLETED"), "the deposit after the RPC came back", 40_000);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    const value = (name: string) => Number(new RegExp(`^${name}\\{network="BASE"\\} (\\d+)`, "m").exec(metrics)?.[1]);
    expect(value("chain_synced_block")).toBeGreaterThan(0);
    expect(value("chain_head_block")).toBeGreaterThanOrEqual(value("chain_synced_block"));
    expect(value("chain_deposits_seen_total")).toBeGreaterThan(0);
    expect(value("chain_deposits_credited_total")).toBeGreaterThan(0);
    expect(value("chain_watcher_errors_total")).toBeGreaterThan(0);
  }, patient(60_000));
});
