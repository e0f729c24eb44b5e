import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Decimal } from "decimal.js";
import { type Address, type Hash } from "viem";
import { createUser, gql, rest } from "./support/http.js";
import { fund } from "./support/ledger.js";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";
import { until } from "./support/until.js";
import { deployToken, freshAddress, liveBaseEnv, startAnvil, testCustody, type Anvil, type Token } from "./support/chain.js";

// Withdrawals sent on a live BASE (a real anvil, our own token as its USDC, three confirmations, a
// 100 ms poll), on both databases. The token's own logs, read from the node, are the count of what was
// sent: never the product's records.
const CONFIRMATIONS = 3;
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
  await anvil.setBalance(TREASURY, 100n * ETH);
  server = await startServer({ env: { ...liveBaseEnv(anvil, token, { CHAIN_CONFIRMATIONS_BASE: String(CONFIRMATIONS), CHAIN_REPLACE_AFTER_MS: "600000" }), CUSTODIAN_MASTER_KEY: MASTER_KEY } });
  tenant = await newTenant(server);
  await until(async () => server.app.services.chain.chainIdOf("BASE") !== undefined, "the RPC's chain id");
}, 60_000);

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

  it("the sandbox helpers cannot move a withdrawal sent on chain (400), on REST and GraphQL", async () => {
    const userId = await fundedUser("10");
    const created = await withdraw(userId, 1, freshAddress());
    const reference = created.body.reference as string;
    const viaRest = await rest(server, "POST", `/v1/sandbox/withdrawals/${reference}/complete`, { headers: tenant.headers });
    expect(viaRest.status).toBe(400);
    expect(viaRest.body.error).toContain("live network");
    const viaGraphql = await gql(server, "mutation ($r: ID!) { failWithdrawal(reference: $r) { status } }", { r: reference }, tenant.headers);
    expect(viaGraphql.body.errors?.[0].extensions?.code).toBe("BAD_USER_INPUT");
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
