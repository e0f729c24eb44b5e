import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Decimal } from "decimal.js";
import { erc20Abi, formatUnits, parseEventLogs, type Address, type Hash } from "viem";
import { sendFor, type ChainSend, type SendPurpose } from "../src/chain/send-records.js";
import { expectedConversion, ledgerOf, newVirtualAccount, providerDeposit } from "./support/deposits.js";
import { createUser, gql, rest } from "./support/http.js";
import { fund } from "./support/ledger.js";
import { newTenant, startServer, testDatabaseUrl, type Tenant, type TestServer } from "./support/server.js";
import { chainsReport, deployToken, freshAddress, liveBaseEnv, startAnvil, testCustody, type Anvil, type Token } from "./support/chain.js";
import { until } from "./support/until.js";
import { patient } from "./support/patience.js";

// Sends on a live BASE (a real anvil, our own token as its USDC, three confirmations, a 100 ms poll),
// on both databases: withdrawals (also with the treasury short of gas or tokens, after a reorg, stuck
// in the mempool), forwards of converted deposits, sweeps with their gas, and what the operator sees.
// The token's own logs, read from the node, are the count of what was sent: never the product's
// records. Sweeps start at 5 tokens here. The tests share the chain and the treasury: they run in order.
const CONFIRMATIONS = 3;
const SWEEP_MIN = "5";
const { masterKey: MASTER_KEY, treasury: TREASURY } = testCustody();
const ETH = 10n ** 18n;
let anvil: Anvil;
let token: Token;
let server: TestServer;
let tenant: Tenant;

beforeAll(async () => {
  anvil = await startAnvil();
  token = await deployToken(anvil, { symbol: "USDC", decimals: 6 });
  await token.mint(TREASURY, units("1000000"));
  await token.mint(anvil.accounts[1], units("1000")); // the outside sender of the chain deposits
  await anvil.setBalance(TREASURY, 100n * ETH);
  server = await startServer({ env: { ...chainEnv(), CUSTODIAN_MASTER_KEY: MASTER_KEY } });
  tenant = await newTenant(server, "live");
  await until(async () => server.app.services.chain.chainIdOf("live", "BASE") !== undefined, "the RPC's chain id");
}, patient(60_000));

const chainEnv = () => liveBaseEnv(anvil, token, { CHAIN_CONFIRMATIONS_BASE: String(CONFIRMATIONS), CHAIN_REPLACE_AFTER_MS: "600000", CHAIN_SWEEP_MIN: SWEEP_MIN });

afterAll(async () => {
  await server?.stop();
  await anvil?.stop();
});

type Withdrawal = { reference: string; status: string; amount: number; failureReason: string | null; transactionHash?: string };

const units = (amount: string) => BigInt(new Decimal(amount).times(1e6).toFixed(0));

async function withdraw(userId: string, amount: number, to: Address, headers: Record<string, string> = tenant.headers) {
  return rest(server, "POST", "/v1/withdrawals/usdc", { headers, body: { userId, amount, walletAddress: to, network: "BASE", chainId: anvil.chainId } });
}

async function withdrawal(reference: string): Promise<Withdrawal> {
  const res = await rest(server, "GET", `/v1/withdrawals/${reference}`, { headers: tenant.headers });
  expect(res.status).toBe(200);
  return res.body;
}

const withdrawalIn = (reference: string, status: string, timeoutMs?: number) =>
  until(async () => {
    const found = await withdrawal(reference);
    return found.status === status ? found : undefined;
  }, `withdrawal ${reference} ${status}`, timeoutMs);

/** Mines blocks until the withdrawal reaches `status` (automine gives one block per transaction; the depth needs more). */
async function mineUntil(reference: string, status: string) {
  return until(async () => {
    const found = await withdrawal(reference);
    if (found.status === status) return found;
    await anvil.mine(1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    return undefined;
  }, `withdrawal ${reference} ${status}`);
}

async function ledgerTypes(userId: string) {
  const res = await rest(server, "GET", `/v1/transactions/ledger/${userId}`, { headers: tenant.headers });
  expect(res.status).toBe(200);
  expect(Array.isArray(res.body), JSON.stringify(res.body)).toBe(true);
  return (res.body as { type: string }[]).map((entry) => entry.type);
}

async function fundedUser(amount: string) {
  const userId = await createUser(server, tenant);
  await fund(server, tenant.clientId, userId, "USDC", amount);
  return userId;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Long enough for several sender passes (100 ms apart). */
const SEVERAL_POLLS = 800;

/** The product's record of a send (read to see why it waits, and which hash it names). */
const sendOf = (purpose: SendPurpose, purposeId: string) => sendFor(server.app.db.sql, purpose, purposeId);
const sendIn = (purpose: SendPurpose, purposeId: string, ready: (send: ChainSend) => boolean, what: string) =>
  until(async () => {
    const send = await sendOf(purpose, purposeId);
    return send && ready(send) ? send : undefined;
  }, `the ${purpose} send of ${purposeId} ${what}`);

/** A sample of GET /metrics (the BASE series with these labels); undefined when absent. */
async function metric(name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const wanted = Object.entries({ network: "BASE", ...labels }).map(([key, value]) => `${key}="${value}"`);
  for (const line of text.split("\n")) {
    const match = /^(\w+)\{([^}]*)\} (\S+)$/.exec(line);
    if (match?.[1] === name && wanted.every((pair) => match[2].split(",").includes(pair))) return Number(match[3]);
  }
  return undefined;
}

/** Every Transfer log of the token, read from the node, optionally from and/or to an address. */
async function transfersOf(filter: { from?: Address; to?: Address }) {
  const logs = await anvil.client.getLogs({ address: token.address, fromBlock: 0n, toBlock: "latest" });
  const same = (a: string, b?: string) => b === undefined || a.toLowerCase() === b.toLowerCase();
  return parseEventLogs({ abi: erc20Abi, logs, eventName: "Transfer" })
    .filter((log) => same(log.args.from, filter.from) && same(log.args.to, filter.to))
    .map((log) => ({ transactionHash: log.transactionHash, value: log.args.value }));
}

async function custodialUser() {
  const userId = await createUser(server, tenant);
  const res = await rest(server, "POST", "/v1/wallet", { headers: tenant.headers, body: { userId } });
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  return { userId, address: res.body.address as Address };
}

type Deposit = { id: string; status: string; amount: number; transactionHash?: string };

async function depositsOf(userId: string): Promise<Deposit[]> {
  const res = await rest(server, "GET", `/v1/transactions/deposits/${userId}`, { headers: tenant.headers });
  expect(res.status).toBe(200);
  return res.body;
}

/** A transfer from an anvil account to a deposit address, mined to the depth: its deposit COMPLETED. */
async function chainDeposit(userId: string, address: Address, amount: string) {
  const hash = await token.transfer(anvil.accounts[1], address, units(amount));
  return until(async () => {
    const found = (await depositsOf(userId)).find((d) => d.transactionHash === hash && d.status === "COMPLETED");
    if (!found) await anvil.mine(1);
    return found;
  }, `the deposit of ${hash} COMPLETED`);
}

const sweepIdsOf = async (depositIds: string[]) =>
  (await server.app.db.prisma.chainDeposit.findMany({ where: { depositId: { in: depositIds } }, select: { sweepId: true } })).map((row) => row.sweepId);

/** `npm run chains -- --json` against this anvil: BASE's report. */
const chainsReportOfBase = async () => (await chainsReport({ ...chainEnv(), CUSTODIAN_MASTER_KEY: MASTER_KEY })).networks[0];

describe("withdrawals on a live network", () => {
  it("go PENDING → PROCESSING with the transaction's hash → COMPLETED at the confirmation depth, as one transfer of the exact amount", async () => {
    const userId = await fundedUser("50");
    const to = freshAddress();
    const created = await withdraw(userId, 12.345678, to);
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const reference = created.body.reference as string;
    const processing = await withdrawalIn(reference, "PROCESSING");
    expect(processing.transactionHash).toMatch(/^0x[0-9a-f]{64}$/);
    const completed = await mineUntil(reference, "COMPLETED");
    expect(completed.transactionHash).toBe(processing.transactionHash);
    const transfers = await token.transfersTo(to);
    expect(transfers).toEqual([{ transactionHash: processing.transactionHash, logIndex: expect.any(Number), value: units("12.345678") }]);
    const receipt = await anvil.client.getTransactionReceipt({ hash: processing.transactionHash as Hash });
    expect(receipt.from.toLowerCase()).toBe(TREASURY.toLowerCase());
    const viaGraphql = await gql(server, "query ($r: ID!) { withdrawal(reference: $r) { status transactionHash } }", { r: reference }, tenant.headers);
    expect(viaGraphql.body.data?.withdrawal ?? viaGraphql.body).toEqual({ status: "COMPLETED", transactionHash: processing.transactionHash });
  });

  it("the sandbox helpers cannot move a live withdrawal sent on chain (403 TEST_MODE_ONLY), on REST and GraphQL", async () => {
    const userId = await fundedUser("10");
    const created = await withdraw(userId, 1, freshAddress());
    const reference = created.body.reference as string;
    const viaRest = await rest(server, "POST", `/v1/sandbox/withdrawals/${reference}/complete`, { headers: tenant.headers });
    expect(viaRest.status).toBe(403);
    expect(viaRest.body.code).toBe("TEST_MODE_ONLY");
    const viaGraphql = await gql(server, "mutation ($r: ID!) { failWithdrawal(reference: $r) { status } }", { r: reference }, tenant.headers);
    expect(viaGraphql.body.errors?.[0].extensions?.code).toBe("TEST_MODE_ONLY");
    await mineUntil(reference, "COMPLETED");
  });

  it("a paused token refuses the transfer: FAILED with a reason and a WITHDRAWAL_REVERSAL, nothing sent", async () => {
    const userId = await fundedUser("20");
    const to = freshAddress();
    await setPaused(true);
    try {
      const created = await withdraw(userId, 7, to);
      const failed = await withdrawalIn(created.body.reference, "FAILED");
      expect(failed.failureReason).toMatch(/refused the transfer/);
      expect(await ledgerTypes(userId)).toContain("WITHDRAWAL_REVERSAL");
      expect((await server.app.services.ledger.balance(tenant.clientId, userId, "USDC")).toFixed()).toBe("20");
    } finally {
      await setPaused(false);
    }
    expect(await token.transfersTo(to)).toEqual([]);
  });
});

async function setPaused(paused: boolean) {
  const { encodeFunctionData } = await import("viem");
  const data = encodeFunctionData({ abi: [{ type: "function", name: "setPaused", inputs: [{ name: "p", type: "bool" }], outputs: [], stateMutability: "nonpayable" }], functionName: "setPaused", args: [paused] });
  const hash = (await anvil.rpc("eth_sendTransaction", [{ from: anvil.accounts[0], to: token.address, data }])) as Hash;
  await anvil.client.waitForTransactionReceipt({ hash, pollingInterval: 20 });
}

describe("a treasury short of funds", () => {
  it("without gas: the withdrawal stays PENDING (waiting for GAS, in the metrics), nothing sent; with gas back it is sent once and completes", async () => {
    const userId = await fundedUser("10");
    const to = freshAddress();
    await anvil.setBalance(TREASURY, 0n);
    let reference: string;
    try {
      const created = await withdraw(userId, 3, to);
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      reference = created.body.reference;
      const waiting = await sendIn("WITHDRAWAL", reference, (send) => send.waitingFor === "GAS", "waiting for GAS");
      expect(waiting).toMatchObject({ status: "QUEUED", transactionHash: null, nonce: null });
      await until(async () => ((await metric("chain_sends_waiting", { reason: "GAS" })) ?? 0) > 0, 'chain_sends_waiting{reason="GAS"} above 0');
      await sleep(SEVERAL_POLLS);
      expect((await withdrawal(reference)).status).toBe("PENDING");
      expect(await token.transfersTo(to)).toEqual([]);
    } finally {
      await anvil.setBalance(TREASURY, 100n * ETH);
    }
    const processing = await withdrawalIn(reference, "PROCESSING");
    const completed = await mineUntil(reference, "COMPLETED");
    expect(completed.transactionHash).toBe(processing.transactionHash);
    expect(await token.transfersTo(to)).toEqual([{ transactionHash: processing.transactionHash, logIndex: expect.any(Number), value: units("3") }]);
    await until(async () => (await metric("chain_sends_waiting", { reason: "GAS" })) === 0, 'chain_sends_waiting{reason="GAS"} back to 0');
  });

  it("short of tokens: the withdrawal stays PENDING (waiting for TOKENS), nothing sent; once minted it is sent once and completes", async () => {
    const held = await token.balanceOf(TREASURY);
    // One whole token more than the treasury holds.
    const amount = Number(held / 10n ** 6n) + 1;
    const userId = await fundedUser(String(amount));
    const to = freshAddress();
    const created = await withdraw(userId, amount, to);
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const reference = created.body.reference as string;
    const waiting = await sendIn("WITHDRAWAL", reference, (send) => send.waitingFor === "TOKENS", "waiting for TOKENS");
    expect(waiting).toMatchObject({ status: "QUEUED", transactionHash: null });
    await until(async () => ((await metric("chain_sends_waiting", { reason: "TOKENS" })) ?? 0) > 0, 'chain_sends_waiting{reason="TOKENS"} above 0');
    await sleep(SEVERAL_POLLS);
    expect((await withdrawal(reference)).status).toBe("PENDING");
    expect(await token.transfersTo(to)).toEqual([]);

    await token.mint(TREASURY, units("1000000"));
    const processing = await withdrawalIn(reference, "PROCESSING");
    await mineUntil(reference, "COMPLETED");
    expect(await token.transfersTo(to)).toEqual([{ transactionHash: processing.transactionHash, logIndex: expect.any(Number), value: units(String(amount)) }]);
    await until(async () => (await metric("chain_sends_waiting", { reason: "TOKENS" })) === 0, 'chain_sends_waiting{reason="TOKENS"} back to 0');
  });
});

describe("a reorg drops a mined send", () => {
  it("the sender broadcasts the same transaction again; it completes as one transfer", async () => {
    const userId = await fundedUser("10");
    const to = freshAddress();
    const created = await withdraw(userId, 4, to);
    const reference = created.body.reference as string;
    const mined = await sendIn("WITHDRAWAL", reference, (send) => send.status === "MINED", "MINED");
    const head = await anvil.client.getBlockNumber({ cacheTime: 0 });
    expect(head - mined.blockNumber! + 1n).toBeLessThan(BigInt(CONFIRMATIONS));
    expect((await withdrawal(reference)).status).toBe("PROCESSING");
    const dropped = (await metric("chain_sends_dropped_total")) ?? 0;

    // Its block and every later one leave the chain, and the transaction with them (not back in the pool).
    await anvil.rollback(Number(head - mined.blockNumber! + 1n));
    expect(await anvil.client.getTransactionReceipt({ hash: mined.transactionHash! }).catch(() => undefined)).toBeUndefined();
    const again = await until(() => anvil.client.getTransactionReceipt({ hash: mined.transactionHash! }).catch(() => undefined), "the same transaction mined again");
    expect(again.status).toBe("success");
    expect(await metric("chain_sends_dropped_total")).toBe(dropped + 1);

    const completed = await mineUntil(reference, "COMPLETED");
    expect(completed.transactionHash).toBe(mined.transactionHash);
    expect(await token.transfersTo(to)).toEqual([{ transactionHash: mined.transactionHash, logIndex: expect.any(Number), value: units("4") }]);
  });
});

describe("forwards of converted deposits on a live network", () => {
  const FEE_PERCENT = "1";

  async function forwardingUser(to: Address) {
    const userId = await createUser(server, tenant);
    await newVirtualAccount(server, tenant, userId, "usd", { destinationAsset: "USDC", destinationNetwork: "BASE", address: to, developerFeePercent: Number(FEE_PERCENT) });
    return userId;
  }

  async function completedDeposit(userId: string, amount: string) {
    // Live mode: the money arrives through the provider's webhook.
    const pending = await providerDeposit(server, tenant, userId, "USD", amount);
    const { converted } = expectedConversion(amount, "USD", "USDC");
    const fee = new Decimal(converted).times(FEE_PERCENT).div(100).toDecimalPlaces(6, Decimal.ROUND_DOWN);
    return { id: pending.id as string, forwarded: new Decimal(converted).minus(fee).toFixed() };
  }

  it("sends the converted amount less the developer fee to destinationAddress once; the deposit names the real hash; TRANSFER_OUT by the deposit's id", async () => {
    const to = freshAddress();
    const userId = await forwardingUser(to);
    const { id, forwarded } = await completedDeposit(userId, "250.75");
    const [sent] = await until(async () => {
      const found = await token.transfersTo(to);
      return found.length ? found : undefined;
    }, "the forward on chain");
    const send = await until(async () => {
      const found = await sendOf("FORWARD", id);
      if (found?.status !== "CONFIRMED") await anvil.mine(1);
      return found?.status === "CONFIRMED" ? found : undefined;
    }, "the forward CONFIRMED");
    expect(send.transactionHash).toBe(sent.transactionHash);
    expect(await token.transfersTo(to)).toEqual([{ transactionHash: sent.transactionHash, logIndex: expect.any(Number), value: units(forwarded) }]);
    const receipt = await anvil.client.getTransactionReceipt({ hash: sent.transactionHash });
    expect(receipt.from.toLowerCase()).toBe(TREASURY.toLowerCase());
    const [deposit] = await depositsOf(userId);
    expect(deposit).toMatchObject({ id, status: "COMPLETED", transactionHash: sent.transactionHash });
    const entries = await ledgerOf(server, tenant, userId);
    expect(entries.filter((e) => e.type.startsWith("TRANSFER_OUT"))).toEqual([{ type: "TRANSFER_OUT", currency: "USDC", amount: `-${forwarded}`, referenceId: id }]);
    expect((await server.app.services.ledger.balance(tenant.clientId, userId, "USDC")).toFixed()).toBe("0");
  });

  it("a forward the token refuses (paused) fails: TRANSFER_OUT_REVERSAL into the user's USDC balance, nothing sent", async () => {
    const to = freshAddress();
    const userId = await forwardingUser(to);
    await setPaused(true);
    let forward: { id: string; forwarded: string };
    try {
      forward = await completedDeposit(userId, "40");
      await sendIn("FORWARD", forward.id, (send) => send.status === "FAILED", "FAILED");
    } finally {
      await setPaused(false);
    }
    const entries = await ledgerOf(server, tenant, userId);
    expect(entries.filter((e) => e.type.startsWith("TRANSFER_OUT")).sort((a, b) => a.type.localeCompare(b.type))).toEqual([
      { type: "TRANSFER_OUT", currency: "USDC", amount: `-${forward.forwarded}`, referenceId: forward.id },
      { type: "TRANSFER_OUT_REVERSAL", currency: "USDC", amount: forward.forwarded, referenceId: forward.id },
    ]);
    expect((await server.app.services.ledger.balance(tenant.clientId, userId, "USDC")).toFixed()).toBe(forward.forwarded);
    expect(await token.transfersTo(to)).toEqual([]);
  });
});

describe("sweeps", () => {
  it(`below ${SWEEP_MIN} tokens nothing moves; once the address holds enough, the treasury sends it gas and its tokens move to the treasury in one transfer`, async () => {
    const { userId, address } = await custodialUser();
    const first = await chainDeposit(userId, address, "3");
    await sleep(SEVERAL_POLLS);
    expect(await sweepIdsOf([first.id])).toEqual([null]);
    expect(await transfersOf({ from: address })).toEqual([]);
    expect(await anvil.client.getBalance({ address })).toBe(0n);

    const second = await chainDeposit(userId, address, "4");
    const [swept] = await until(async () => {
      const found = await transfersOf({ from: address });
      return found.length ? found : undefined;
    }, "the sweep on chain");
    expect(swept.value).toBe(units("7"));
    expect(await transfersOf({ from: address })).toEqual([{ transactionHash: swept.transactionHash, value: units("7") }]);
    expect((await transfersOf({ to: TREASURY })).filter((t) => t.transactionHash === swept.transactionHash)).toHaveLength(1);
    expect(await token.balanceOf(address)).toBe(0n);

    // The product records it: a SWEEP send with that hash, named by both deposits, confirmed at depth.
    const [sweepId] = await sweepIdsOf([first.id]);
    expect(sweepId).not.toBeNull();
    expect(await sweepIdsOf([second.id])).toEqual([sweepId]);
    const sweep = await until(async () => {
      const found = await server.app.db.prisma.chainSend.findUnique({ where: { id: sweepId! } });
      if (found?.status !== "CONFIRMED") await anvil.mine(1);
      return found?.status === "CONFIRMED" ? found : undefined;
    }, "the sweep CONFIRMED");
    expect(sweep).toMatchObject({ purpose: "SWEEP", transactionHash: swept.transactionHash });
    expect(sweep.fromAddress.toLowerCase()).toBe(address.toLowerCase());

    // The gas came first, from the treasury, as native coin, read from the chain.
    const gasSends = await server.app.db.prisma.chainSend.findMany({ where: { purpose: "GAS", toAddress: { equals: address, mode: "insensitive" } } });
    expect(gasSends).toHaveLength(1);
    const gasTx = await anvil.client.getTransaction({ hash: gasSends[0].transactionHash as Hash });
    const gasReceipt = await anvil.client.getTransactionReceipt({ hash: gasTx.hash });
    expect(gasReceipt.status).toBe("success");
    expect(gasTx.from.toLowerCase()).toBe(TREASURY.toLowerCase());
    expect(gasTx.to?.toLowerCase()).toBe(address.toLowerCase());
    expect(gasTx.value).toBeGreaterThan(0n);
    expect(await anvil.client.getBalance({ address, blockNumber: gasReceipt.blockNumber - 1n })).toBe(0n);
    expect(await anvil.client.getBalance({ address, blockNumber: gasReceipt.blockNumber })).toBe(gasTx.value);
    const sweepReceipt = await anvil.client.getTransactionReceipt({ hash: swept.transactionHash });
    expect(sweepReceipt.blockNumber).toBeGreaterThan(gasReceipt.blockNumber);
    // Its gas limit is the node's estimate, no margin: what it leaves unused is the refund for emptying the address's
    // token balance (4,800 gas) and the estimate's rounding, never a fifth of the gas money.
    const sweepTx = await anvil.client.getTransaction({ hash: swept.transactionHash });
    expect(sweepTx.gas - sweepReceipt.gasUsed).toBeLessThanOrEqual(6_000n);
  });
});

describe("the operator's view", () => {
  const waitingForGas = () => server.app.db.prisma.chainSend.count({ where: { chainId: anvil.chainId, status: "QUEUED", waitingFor: "GAS" } });

  it("npm run chains and /metrics show the pending sends and the oldest one's age, the sends waiting, the treasury's balances and the unswept deposits", async () => {
    const { userId: small, address: smallAddress } = await custodialUser();
    await chainDeposit(small, smallAddress, "2"); // below the sweep threshold: stays unswept
    const userId = await fundedUser("10");
    const { userId: large, address: largeAddress } = await custodialUser();
    await anvil.setBalance(TREASURY, 0n);
    let reference: string;
    try {
      // Three sends wait for gas: the withdrawal and the gas top-up from the treasury, the sweep from a deposit address.
      reference = (await withdraw(userId, 1, freshAddress())).body.reference;
      await chainDeposit(large, largeAddress, "6");
      await until(async () => (await waitingForGas()) === 3, "three sends waiting for GAS");
      await sleep(1_100);
      const tokens = formatUnits(await token.balanceOf(TREASURY), 6);

      const report = await chainsReportOfBase();
      expect(report).toMatchObject({ network: "BASE", rpc: "up", treasury: { address: TREASURY, native: "0", tokens: { USDC: tokens } } });
      if (testDatabaseUrl) {
        expect(report.pendingSends).toBeGreaterThanOrEqual(3);
        expect(report.oldestPendingSeconds).toBeGreaterThanOrEqual(1);
        expect(report.unsweptDeposits).toBeGreaterThanOrEqual(2);
      } else {
        // The embedded database is this test's memory: the script opens an empty one of its own.
        expect(report).toMatchObject({ pendingSends: 0, oldestPendingSeconds: null, unsweptDeposits: 0 });
      }

      await until(async () => ((await metric("chain_sends_oldest_pending_seconds")) ?? 0) >= 1, "chain_sends_oldest_pending_seconds");
      await until(async () => (await metric("chain_sends_waiting", { reason: "GAS" })) === 3, 'chain_sends_waiting{reason="GAS"} 3 (every address\'s)', 3_000);
      expect(await metric("chain_sends_pending")).toBeGreaterThanOrEqual(3);
      expect(await metric("chain_unswept_deposits")).toBeGreaterThanOrEqual(2);
      expect(await metric("chain_treasury_native_balance")).toBe(0);
      expect(await metric("chain_treasury_token_balance", { token: "USDC" })).toBe(Number(tokens));
    } finally {
      await anvil.setBalance(TREASURY, 100n * ETH);
    }
    await mineUntil(reference, "COMPLETED");
    await until(async () => {
      const pending = await metric("chain_sends_pending");
      if (pending !== 0) await anvil.mine(1);
      return pending === 0;
    }, "chain_sends_pending back to 0");
    expect(await transfersOf({ from: largeAddress })).toEqual([{ transactionHash: expect.any(String), value: units("6") }]);
    expect(await metric("chain_sends_waiting", { reason: "GAS" })).toBe(0);
    expect(await metric("chain_treasury_native_balance")).toBeGreaterThan(0);
  }, patient(60_000));
});

describe("a send stuck in the mempool", () => {
  // A server that replaces a send not mined within a second (the same anvil, the sender lease handed over).
  beforeAll(async () => {
    await server.stop();
    server = await startServer({ env: { ...chainEnv(), CHAIN_REPLACE_AFTER_MS: "1000", CUSTODIAN_MASTER_KEY: MASTER_KEY } });
    tenant = await newTenant(server, "live");
    await until(async () => server.app.services.chain.chainIdOf("live", "BASE") !== undefined, "the RPC's chain id");
  }, patient(60_000));

  it("is replaced at its nonce with a higher fee; once mined it completes with the mined hash, as one transfer", async () => {
    const userId = await fundedUser("10");
    const to = freshAddress();
    await anvil.rpc("evm_setAutomine", [false]);
    try {
      const created = await withdraw(userId, 5, to);
      const reference = created.body.reference as string;
      const first = await withdrawalIn(reference, "PROCESSING");
      const a = await anvil.client.getTransaction({ hash: first.transactionHash as Hash });
      expect(a.blockNumber).toBeNull();
      const replaced = await until(async () => {
        const found = await withdrawal(reference);
        return found.transactionHash !== first.transactionHash ? found : undefined;
      }, "a replacement");
      const b = await anvil.client.getTransaction({ hash: replaced.transactionHash as Hash });
      expect(b.nonce).toBe(a.nonce);
      expect(b.from).toBe(a.from);
      expect(b.maxFeePerGas!).toBeGreaterThan(a.maxFeePerGas!);
      expect(replaced.status).toBe("PROCESSING");

      await anvil.mine(1);
      const completed = await mineUntil(reference, "COMPLETED");
      const transfers = await token.transfersTo(to);
      expect(transfers).toEqual([{ transactionHash: completed.transactionHash, logIndex: expect.any(Number), value: units("5") }]);
      expect(completed.transactionHash).not.toBe(first.transactionHash);
      const mined = await anvil.client.getTransaction({ hash: completed.transactionHash as Hash });
      expect(mined.nonce).toBe(a.nonce);
    } finally {
      await anvil.rpc("evm_setAutomine", [true]);
    }
  });
});

describe("an address that cannot send", () => {
  it("a sweep from an address the master key does not derive cannot be signed, and holds up no withdrawal queued after it", async () => {
    const { userId, address: derived } = await custodialUser();
    const foreign = freshAddress();
    await server.app.db.prisma.wallet.update({ where: { address: derived }, data: { address: foreign } });
    await chainDeposit(userId, foreign, "6");
    const sweep = await until(
      () => server.app.db.prisma.chainSend.findFirst({ where: { purpose: "SWEEP", fromAddress: foreign, status: "QUEUED" } }),
      "the sweep queued",
    );
    const to = freshAddress();
    const created = await withdraw(await fundedUser("5"), 2, to);
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const completed = await mineUntil(created.body.reference, "COMPLETED");
    expect(await transfersOf({ to })).toEqual([{ transactionHash: completed.transactionHash, value: units("2") }]);
    expect(await transfersOf({ from: foreign })).toEqual([]);
    expect(await server.app.db.prisma.chainSend.findUnique({ where: { id: sweep.id } })).toMatchObject({ status: "QUEUED" });
  });
});
