import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Decimal } from "decimal.js";
import type { Address } from "viem";
import { depositsOf } from "./support/deposits.js";
import { createUser, rest } from "./support/http.js";
import { newTenant, startServer, testDatabaseUrl, type Tenant, type TestServer } from "./support/server.js";
import { createScratchDatabase, type ScratchDatabase } from "./support/scratch-server.js";
import { needs, REQUIREMENTS } from "./support/requirements.js";
import { chainsReport, deployToken, freshAddress, liveBaseEnv, startAnvil, testCustody, type Anvil, type Token } from "./support/chain.js";
import { until } from "./support/until.js";

// Reconciliation on a real anvil (live mode, BASE): the chains' holdings of USDC (the treasury, the deposit
// addresses) against what the platform owes (users' balances, client revenue, withdrawals not yet on the
// chain), every sender pass (CHAIN_RECONCILE_INTERVAL_MS=0). Sweeps start at 100 USDC: none here, so
// every token stays where the test put it. The books are a whole mode's, so on PostgreSQL the file runs
// on a database of its own (test files share one, and their live users' balances would count here).
const CONFIRMATIONS = 3;
let anvil: Anvil;
let token: Token;
let server: TestServer;
let tenant: Tenant;
let env: Record<string, string>;
let sender: Address;
let database: ScratchDatabase | undefined;
const custody = testCustody(37);

beforeAll(async () => {
  anvil = await startAnvil();
  token = await deployToken(anvil, { symbol: "USDC", decimals: 6 });
  sender = anvil.accounts[1];
  await token.mint(sender, 1_000_000_000n);
  await anvil.mine(8);
  await anvil.setBalance(custody.treasury, 10n ** 18n);
  env = liveBaseEnv(anvil, token, {
    CHAIN_CONFIRMATIONS_BASE: String(CONFIRMATIONS),
    CHAIN_SWEEP_MIN: "100",
    CHAIN_RECONCILE_INTERVAL_MS: "0",
    CUSTODIAN_MASTER_KEY: custody.masterKey,
  });
  if (testDatabaseUrl) {
    database = await createScratchDatabase(testDatabaseUrl, "reconciliation");
    env.DATABASE_URL = database.url;
  }
  server = await startServer({ env });
  tenant = await newTenant(server, "live");
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await anvil?.stop();
  await database?.drop();
});

const units = (amount: string) => BigInt(new Decimal(amount).times(1e6).toFixed(0));
/** Long enough for several sender passes (100 ms apart). */
const severalPolls = () => new Promise((resolve) => setTimeout(resolve, 1000));
const GAUGES = ["on_chain", "liabilities", "difference"] as const;

/** The live USDC reconciliation gauges, as /metrics shows them. */
async function books(): Promise<Record<(typeof GAUGES)[number], string | undefined>> {
  const metrics = await (await fetch(`${server.url}/metrics`)).text();
  const gauge = (name: string) => new RegExp(`^chain_reconciliation_${name}\\{mode="live",token="USDC"\\} (\\S+)$`, "m").exec(metrics)?.[1];
  return Object.fromEntries(GAUGES.map((name) => [name, gauge(name)])) as Record<(typeof GAUGES)[number], string | undefined>;
}
/** Until the gauges named read these values. */
const booksAre = (expected: Partial<Record<(typeof GAUGES)[number], string>>) =>
  until(async () => {
    const read = await books();
    return Object.entries(expected).every(([name, value]) => read[name as (typeof GAUGES)[number]] === value);
  }, `the books ${JSON.stringify(expected)}`, 30_000);

const logLines = (message: string, from = 0) =>
  server.logs.slice(from).flatMap((chunk) => chunk.split("\n")).filter(Boolean).map((line) => JSON.parse(line)).filter((line) => line.msg?.startsWith(message));
const SHORTFALL = "chain reconciliation: shortfall";
const RESOLVED = "chain reconciliation: the shortfall is resolved";

async function custodialUser() {
  const userId = await createUser(server, tenant);
  const res = await rest(server, "POST", "/v1/wallet", { headers: tenant.headers, body: { userId } });
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  return { userId, address: res.body.address as Address };
}

async function depositCompleted(amount: string) {
  const user = await custodialUser();
  await token.transfer(sender, user.address, units(amount));
  await anvil.mine(CONFIRMATIONS - 1);
  await until(async () => (await depositsOf(server, tenant, user.userId))[0]?.status === "COMPLETED", "the deposit to complete");
  return user;
}

let logsAtStart = 0;

describe("the books of a mode and token, every sender pass", () => {
  it("balanced: a deposit credited, and a withdrawal (with a developer fee) debited and still in the treasury, make a difference of 0", async () => {
    logsAtStart = server.logs.length;
    const { userId } = await depositCompleted("25");
    await booksAre({ on_chain: "25", liabilities: "25", difference: "0" });
    // 10 to send and 2 to the client's revenue: the treasury holds no USDC, so the send waits, its 10 still owed.
    const res = await rest(server, "POST", "/v1/withdrawals/usdc", {
      headers: tenant.headers,
      body: { userId, amount: 10, developerFee: 2, walletAddress: freshAddress(), network: "BASE", chainId: anvil.chainId },
    });
    expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
    await until(async () => (await server.app.db.prisma.chainSend.findFirst({ where: { purpose: "WITHDRAWAL", waitingFor: "TOKENS" } })) !== null, "the withdrawal to wait for tokens");
    await severalPolls();
    expect(await books()).toEqual({ on_chain: "25", liabilities: "25", difference: "0" });
    expect(logLines(SHORTFALL, logsAtStart)).toEqual([]);
  });

  it("a reorg deeper than the depth takes a completed deposit's transfer: a shortfall of its amount in /metrics within a pass, logged once", async () => {
    await anvil.mine(8); // the first test's blocks stay out of the reorg
    const logsBefore = server.logs.length;
    const orphan = await depositCompleted("40");
    await booksAre({ on_chain: "65", liabilities: "65", difference: "0" });
    await anvil.rollback(4); // the transfer is gone for good
    await anvil.mine(6);
    await booksAre({ on_chain: "25", liabilities: "65", difference: "-40" });
    expect((await server.app.db.prisma.chainDeposit.findFirstOrThrow({ where: { deposit: { userId: orphan.userId } } })).flag).toBe("ORPHANED");
    await severalPolls();
    expect(await books()).toEqual({ on_chain: "25", liabilities: "65", difference: "-40" });
    expect(logLines(SHORTFALL, logsBefore)).toMatchObject([{ level: 50, mode: "live", token: "USDC", onChain: "25", liabilities: "65", difference: "-40" }]);
  });

  it("npm run chains shows the shortfall", { ...needs(REQUIREMENTS.postgres), timeout: 120_000 }, async () => {
    const run = await chainsReport(env);
    expect(run.networks[0].reconciliation.USDC).toMatchObject({
      mode: "live",
      token: "USDC",
      onChain: "25",
      liabilities: "65",
      userBalances: "53",
      clientRevenue: "2",
      sendsNotOnChain: "10",
      difference: "-40",
    });
  });

  it("resolved (the operator puts the tokens in the treasury): the difference is 0 again, logged once; the shortfall was logged only once", async () => {
    const logsBefore = server.logs.length;
    // (The waiting withdrawal may now be sent from them: the difference stays 0 either way.)
    await token.mint(custody.treasury, units("40"));
    await booksAre({ difference: "0" });
    await severalPolls();
    expect(logLines(RESOLVED, logsBefore)).toMatchObject([{ level: 30, mode: "live", token: "USDC", difference: "0" }]);
    expect(logLines(SHORTFALL, logsAtStart)).toHaveLength(1);
  });
});
