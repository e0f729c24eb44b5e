import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Address } from "viem";
import { createUser, gql, rest } from "./support/http.js";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";
import { until } from "./support/until.js";
import { chainsReport, deployToken, startAnvil, testCustody, type Anvil, type Token } from "./support/chain.js";

// ETHEREUM live on a real anvil with only its USDC set (our token): the default USDT contract (the
// mainnet address) has no code there, and the default DAI address holds code without a decimals().
// Test mode's ETHEREUM is a test chain on another anvil, USDT and DAI taken off its list.
const USDT = "0xdAC17F958D2ee523a2206206994597C13D831ec7";
const DAI = "0x6B175474E89094C44Da98b954EedeAC495271d0F";
const CONFIRMATIONS = 2;
let live: { anvil: Anvil; token: Token };
let test: { anvil: Anvil; token: Token };
let server: TestServer;
let liveTenant: Tenant;
let testTenant: Tenant;
let env: Record<string, string>;

beforeAll(async () => {
  const [liveAnvil, testAnvil] = await Promise.all([startAnvil(), startAnvil()]);
  const [liveToken, testToken] = await Promise.all([deployToken(liveAnvil), deployToken(testAnvil)]);
  live = { anvil: liveAnvil, token: liveToken };
  test = { anvil: testAnvil, token: testToken };
  // Code that stops at once: a call to it succeeds with no data, so decimals() answers nothing.
  await live.anvil.rpc("anvil_setCode", [DAI, "0x00"]);
  await live.token.mint(live.anvil.accounts[1], 1_000_000_000n);
  env = {
    CHAIN_RPC_URL_ETHEREUM: live.anvil.url,
    CHAIN_TOKEN_ETHEREUM_USDC: live.token.address,
    CHAIN_CONFIRMATIONS_ETHEREUM: String(CONFIRMATIONS),
    CHAIN_TEST_RPC_URL_ETHEREUM: test.anvil.url,
    CHAIN_TEST_TOKEN_ETHEREUM_USDC: test.token.address,
    CHAIN_TEST_TOKEN_ETHEREUM_USDT: "none",
    // Empty takes the token off too.
    CHAIN_TEST_TOKEN_ETHEREUM_DAI: "",
    CHAIN_TEST_CONFIRMATIONS_ETHEREUM: String(CONFIRMATIONS),
    CHAIN_POLL_MS: "100",
    CHAIN_RPC_TIMEOUT_MS: "1000",
    CUSTODIAN_MASTER_KEY: testCustody(23).masterKey,
  };
  server = await startServer({ env });
  [liveTenant, testTenant] = await Promise.all([newTenant(server, "live"), newTenant(server, "test")]);
  // Checked, not yet watched: whether the live watcher gets going despite USDT and DAI is the deposit test's question.
  await until(async () => (await ethereum(liveTenant)).tokenAvailability.USDC.available, "the live tokens to be checked");
  await until(async () => (await ethereum(testTenant)).syncedBlock != null, "the test chain's watcher to start");
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await Promise.all([live?.anvil.stop(), test?.anvil.stop()]);
});

type Availability = { available: boolean; reason: string | null };
type NetworkBody = { network: string; chainId: number | null; mode: string; tokens: Record<string, string>; tokenAvailability: Record<string, Availability>; syncedBlock: number | null };

async function ethereum(tenant: Tenant): Promise<NetworkBody> {
  const res = await rest(server, "GET", "/v1/networks", { headers: tenant.headers });
  expect(res.status).toBe(200);
  return (res.body as NetworkBody[]).find((network) => network.network === "ETHEREUM")!;
}

/** A sample of GET /metrics with these labels; undefined when absent. */
async function metric(name: string, labels: Record<string, string>): Promise<number | undefined> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  for (const line of text.split("\n")) {
    const match = /^(\w+)\{([^}]*)\} (\S+)$/.exec(line);
    if (match?.[1] === name && wanted.every((pair) => match[2].split(",").includes(pair))) return Number(match[3]);
  }
  return undefined;
}

const NO_CODE = `no contract code at ${USDT}`;
const NO_DECIMALS = /decimals\(\) failed: .*returned no data/;

describe("one token without a working contract does not stop the network", () => {
  it("USDT (no code) and DAI (no decimals()) are unavailable with their reasons on REST and GraphQL, USDC available", async () => {
    const network = await ethereum(liveTenant);
    expect(network).toMatchObject({ chainId: live.anvil.chainId, mode: "live", tokens: { USDC: live.token.address, USDT, DAI } });
    expect(network.tokenAvailability).toMatchObject({ USDC: { available: true, reason: null }, USDT: { available: false, reason: NO_CODE } });
    expect(network.tokenAvailability.DAI.available).toBe(false);
    expect(network.tokenAvailability.DAI.reason).toMatch(NO_DECIMALS);
    const graphql = await gql(server, "{ networks { network tokens { symbol address available reason } } }", {}, liveTenant.headers);
    expect(graphql.body.errors).toBeUndefined();
    const tokens = graphql.body.data.networks.find((n: { network: string }) => n.network === "ETHEREUM").tokens;
    expect(tokens).toEqual([
      { symbol: "USDC", address: live.token.address, available: true, reason: null },
      { symbol: "USDT", address: USDT, available: false, reason: NO_CODE },
      { symbol: "DAI", address: DAI, available: false, reason: expect.stringMatching(NO_DECIMALS) },
    ]);
    // A sandbox network's tokens are always available (the sandbox plays them).
    const polygon = ((await rest(server, "GET", "/v1/networks", { headers: testTenant.headers })).body as NetworkBody[]).find((n) => n.network === "POLYGON")!;
    expect(polygon.tokenAvailability).toEqual({ USDC: { available: true, reason: null } });
    expect(await metric("chain_token_available", { network: "ETHEREUM", token: "USDT", mode: "live" })).toBe(0);
    expect(await metric("chain_token_available", { network: "ETHEREUM", token: "DAI", mode: "live" })).toBe(0);
    expect(await metric("chain_token_available", { network: "ETHEREUM", token: "USDC", mode: "live" })).toBe(1);
  });

  it("a USDC deposit is seen and credited while USDT and DAI are unavailable", async () => {
    await until(async () => (await ethereum(liveTenant)).syncedBlock != null, "the live watcher to start");
    const userId = await createUser(server, liveTenant);
    const wallet = await rest(server, "POST", "/v1/wallet", { headers: liveTenant.headers, body: { userId } });
    expect(wallet.status, JSON.stringify(wallet.body)).toBeLessThan(300);
    await live.token.transfer(live.anvil.accounts[1], wallet.body.address as Address, 7_250_000n);
    await live.anvil.mine(CONFIRMATIONS);
    const deposit = await until(async () => {
      const res = await rest(server, "GET", `/v1/transactions/deposits/${userId}`, { headers: liveTenant.headers });
      return ((res.body.data ?? res.body) as { status: string; amount: number; currency: string }[]).find((d) => d.status === "COMPLETED");
    }, "the USDC deposit to complete");
    expect(deposit).toMatchObject({ amount: 7.25, currency: "USDC" });
  });

  it("npm run chains reports each token's availability and reason", async () => {
    const { networks, stdout } = await chainsReport(env);
    const report = networks.find((n) => n.network === "ETHEREUM" && n.mode === "live")!;
    expect(report.tokenAvailability).toMatchObject({ USDC: { available: true, reason: null }, USDT: { available: false, reason: NO_CODE } });
    expect(report.tokenAvailability.DAI.reason).toMatch(NO_DECIMALS);
    expect(report.treasury.tokens).toMatchObject({ USDC: "0", USDT: null, DAI: null });
    const testReport = networks.find((n) => n.network === "ETHEREUM" && n.mode === "test")!;
    expect(testReport.tokenAvailability).toEqual({ USDC: { available: true, reason: null } });
    expect(stdout).toContain(NO_CODE);
    // The script opens the database (on the embedded one, a fresh one it migrates): minutes on a loaded machine.
  }, 300_000);

  it("=none (or empty) takes a token off a network's list, per mode", async () => {
    const network = await ethereum(testTenant);
    expect(network).toMatchObject({ chainId: test.anvil.chainId, mode: "test" });
    expect(network.tokens).toEqual({ USDC: test.token.address });
    expect(network.tokenAvailability).toEqual({ USDC: { available: true, reason: null } });
    const userId = await createUser(server, testTenant);
    const res = await rest(server, "POST", "/v1/virtual-account/USD", { headers: testTenant.headers, body: { userId, destinationAsset: "USDT", destinationNetwork: "ETHEREUM" } });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body).toMatchObject({ code: "BAD_USER_INPUT", param: "destinationAsset" });
    expect(res.body.error).toContain("USDT has no contract configured on ETHEREUM in test mode");
  });
});

describe("an unavailable token is refused before anything is created", () => {
  it.each([["DAI", NO_DECIMALS], ["USDT", new RegExp(NO_CODE)]])("a live virtual account forwarding %s on ETHEREUM is 400 naming destinationAsset", async (asset, reason) => {
    const userId = await createUser(server, liveTenant);
    const body = { userId, destinationAsset: asset, destinationNetwork: "ETHEREUM" };
    const res = await rest(server, "POST", "/v1/virtual-account/USD", { headers: liveTenant.headers, body });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body).toMatchObject({ code: "BAD_USER_INPUT", param: "destinationAsset" });
    expect(res.body.error).toContain(`${asset} is unavailable on ETHEREUM in live mode`);
    expect(res.body.error).toMatch(reason);
    expect(await server.app.db.prisma.virtualAccount.count({ where: { userId } })).toBe(0);
    // USDC, which works there, is accepted.
    const usdc = await rest(server, "POST", "/v1/virtual-account/USD", { headers: liveTenant.headers, body: { ...body, destinationAsset: "USDC" } });
    expect(usdc.status, JSON.stringify(usdc.body)).toBe(200);
  });
});

describe("a USDC account on a chain", () => {
  it.each([
    ["live", () => liveTenant, () => live],
    ["test", () => testTenant, () => test],
  ])("in %s mode shows the chain id its RPC reports and the configured token", async (_mode, tenant, chain) => {
    const userId = await createUser(server, tenant());
    const res = await rest(server, "POST", `/v1/accounts/usdc/${userId}`, { headers: tenant().headers, body: { chainType: "ETHEREUM" } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ chain: "ETHEREUM", chainId: chain().anvil.chainId, tokenAddress: chain().token.address });
    const read = await gql(server, `query ($id: ID!) { usdcAccount(userId: $id, chain: ETHEREUM) { chainId tokenAddress } }`, { id: userId }, tenant().headers);
    expect(read.body.data.usdcAccount).toEqual({ chainId: chain().anvil.chainId, tokenAddress: chain().token.address });
  });
});

describe("an unavailable token is checked again on later passes", () => {
  it("USDT becomes available once its address holds a token contract", async () => {
    const code = await live.anvil.client.getCode({ address: live.token.address });
    await live.anvil.rpc("anvil_setCode", [USDT, code]);
    await until(async () => (await ethereum(liveTenant)).tokenAvailability.USDT.available, "USDT to be found available");
    expect((await ethereum(liveTenant)).tokenAvailability.USDT).toEqual({ available: true, reason: null });
    expect(await metric("chain_token_available", { network: "ETHEREUM", token: "USDT", mode: "live" })).toBe(1);
  });
});
