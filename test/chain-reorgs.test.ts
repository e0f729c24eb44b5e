import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Decimal } from "decimal.js";
import { encodeFunctionData, type Address, type Hash, type Hex } from "viem";
import { depositsOf, ledgerOf } from "./support/deposits.js";
import { createUser, rest } from "./support/http.js";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";
import { deployToken, freshAddress, liveBaseEnv, startAnvil, testCustody, tokenArtifact, type Anvil, type Token } from "./support/chain.js";
import { until } from "./support/until.js";
import { patient } from "./support/patience.js";

// Reorgs against deposits (issue 35): on a real anvil, three confirmations, a 100 ms poll. Each
// transfer is counted from the token's logs on the node, each credit from the ledger. Sweeps start
// at 30 USDC, so that few addresses are swept: the last test's, and the too-large deposit's (its sweep
// and its gas top-up may be in blocks a later test reorganises: the sender sends them again, and the
// sweep reaches the treasury late; so a sweep is checked by its own transfer, never by the treasury's balance).
const CONFIRMATIONS = 3;
const SWEEP_MIN = 30;
let anvil: Anvil;
let token: Token;
let server: TestServer;
let tenant: Tenant;
let sender: Address;
const custody = testCustody(23);

beforeAll(async () => {
  anvil = await startAnvil();
  token = await deployToken(anvil, { symbol: "USDC", decimals: 6 });
  sender = anvil.accounts[1];
  await token.mint(sender, 1_000_000_000_000n);
  // Blocks of their own between the setup and the tests: no test's reorg reaches the setup's transactions.
  await anvil.mine(8);
  await anvil.setBalance(custody.treasury, 10n ** 18n);
  // A rollback takes a send broadcast in its blocks but not yet seen mined out of anvil's pool too: the
  // sender replaces it after CHAIN_REPLACE_AFTER_MS (3 minutes by default), here after 5 s.
  const env = liveBaseEnv(anvil, token, { CHAIN_CONFIRMATIONS_BASE: String(CONFIRMATIONS), CHAIN_SWEEP_MIN: String(SWEEP_MIN), CHAIN_REPLACE_AFTER_MS: "5000", CUSTODIAN_MASTER_KEY: custody.masterKey });
  server = await startServer({ env });
  tenant = await newTenant(server, "live");
  await until(async () => (await rest(server, "GET", "/v1/networks", { headers: tenant.headers })).body.find((n: { network: string }) => n.network === "BASE")?.syncedBlock != null, "the watcher to start");
}, patient(120_000));

afterAll(async () => {
  await server?.stop();
  await anvil?.stop();
});

type Deposit = { id: string; status: string; amount: number; eventId: string; transactionHash: string };

const units = (amount: string) => BigInt(new Decimal(amount).times(1e6).toFixed(0));
/** Long enough for several watcher passes (100 ms apart). */
const severalPolls = () => new Promise((resolve) => setTimeout(resolve, 800));

async function custodialUser() {
  const userId = await createUser(server, tenant);
  const res = await rest(server, "POST", "/v1/wallet", { headers: tenant.headers, body: { userId } });
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  return { userId, address: res.body.address as Address };
}

const deposits = async (userId: string) => (await depositsOf(server, tenant, userId)) as unknown as Deposit[];
const statuses = async (userId: string) => (await deposits(userId)).map((d) => d.status).sort();
const settledAs = (userId: string, expected: string[]) =>
  until(async () => JSON.stringify(await statuses(userId)) === JSON.stringify([...expected].sort()), `deposits ${expected.join(", ")}`, 15_000);
const credits = async (userId: string) => (await ledgerOf(server, tenant, userId)).filter((entry) => entry.type === "DEPOSIT").map((entry) => entry.amount);
const rawOf = async (hash: Hash) => (await anvil.rpc("eth_getRawTransactionByHash", [hash])) as Hex;
/** A mint to an outside address, as a transaction request anvil_reorg mines (placed before the others of its block, it shifts their log indexes). */
const mintRequest = () => ({ from: anvil.accounts[0], to: token.address, data: encodeFunctionData({ abi: tokenArtifact().abi, functionName: "mint", args: [freshAddress(), 1n] }) });
const chainRow = (depositId: string) => server.app.db.prisma.chainDeposit.findUniqueOrThrow({ where: { depositId } });
/** The server's JSON log lines with this message, from the `from`-th line written. */
const logLines = (message: string, from = 0) =>
  server.logs.slice(from).flatMap((chunk) => chunk.split("\n")).filter(Boolean).map((line) => JSON.parse(line)).filter((line) => line.msg?.startsWith(message));
const DEEP_REORG = "reorg deeper than the confirmation depth";
/**
 * A reorg deeper than the depth that takes a deposit's transfer for good: the chain rolled back to
 * just below the deposit's block, then 6 new blocks. Counted from the deposit's block, not the head:
 * the server's own sends (gas, sweeps of earlier tests) are mined at once and may add blocks above it.
 * Automine is off meanwhile, so none lands between reading the head and the rollback.
 */
async function rollBackPast(depositId: string) {
  await anvil.rpc("evm_setAutomine", [false]);
  try {
    const { blockNumber } = await chainRow(depositId);
    const head = await anvil.client.getBlockNumber({ cacheTime: 0 });
    await anvil.rollback(Number(head - blockNumber) + 1);
    await anvil.mine(6);
  } finally {
    await anvil.rpc("evm_setAutomine", [true]);
  }
}

describe("a reorg never credits one transfer twice", () => {
  it("within the depth: a transaction of two transfers mined again behind a mint (log indexes 0,1 → 1,2) is two deposits, each credited once", async () => {
    const [u1, u2] = [await custodialUser(), await custodialUser()];
    const hash = await token.transferMany(sender, [u1.address, u2.address], [units("3"), units("20")]);
    await settledAs(u1.userId, ["PENDING"]);
    await settledAs(u2.userId, ["PENDING"]);
    await anvil.reorg(1, [[mintRequest() as never, 0], [await rawOf(hash), 0]]);
    await anvil.mine(6);
    await settledAs(u1.userId, ["COMPLETED"]);
    await settledAs(u2.userId, ["COMPLETED"]);
    await severalPolls();
    // The chain moved them: the same transaction, at indexes 1 and 2 now.
    expect((await token.transfersTo(u1.address)).map((t) => [t.transactionHash, t.logIndex])).toEqual([[hash, 1]]);
    expect((await token.transfersTo(u2.address)).map((t) => [t.transactionHash, t.logIndex])).toEqual([[hash, 2]]);
    expect(await statuses(u1.userId)).toEqual(["COMPLETED"]);
    expect(await statuses(u2.userId)).toEqual(["COMPLETED"]);
    expect(await credits(u1.userId)).toEqual(["3"]);
    expect(await credits(u2.userId)).toEqual(["20"]);
  });

  it("deeper than the depth: a completed transfer re-mined at another log index by a 4-block reorg is not credited again; the error line tells the depth once", async () => {
    const { userId, address } = await custodialUser();
    const hash = await token.transfer(sender, address, units("25"));
    await anvil.mine(CONFIRMATIONS - 1);
    await settledAs(userId, ["COMPLETED"]);
    const [deposit] = await deposits(userId);
    const logsBefore = server.logs.length;
    // The 4 newest blocks replaced: the transfer is in the second of them again, behind a mint.
    await anvil.reorg(4, [[mintRequest() as never, 1], [await rawOf(hash), 1]]);
    await anvil.mine(6);
    await until(async () => (await chainRow(deposit.id)).logIndex === 1, "the deposit to follow its transfer");
    await severalPolls();
    expect((await token.transfersTo(address)).map((t) => [t.transactionHash, t.logIndex])).toEqual([[hash, 1]]);
    expect(await deposits(userId)).toMatchObject([{ id: deposit.id, status: "COMPLETED" }]);
    expect(await credits(userId)).toEqual(["25"]);
    // Flagged while its transfer was gone, and no more once it was back.
    expect((await chainRow(deposit.id)).flag).toBeNull();
    expect(logLines(DEEP_REORG, logsBefore)).toMatchObject([{ level: 50, depth: 4, orphaned: 1, depositIds: [deposit.id] }]);
  });

  it("a reorg as deep as the depth under a range scanned at once tells its exact depth, and counts no deposit still on the chain", async () => {
    const { userId, address } = await custodialUser();
    // Five blocks mined at once (the watcher reads them as one range), the transfer in the first.
    await anvil.rpc("evm_setAutomine", [false]);
    try {
      await anvil.rpc("eth_sendTransaction", [{ from: sender, to: token.address, data: encodeFunctionData({ abi: tokenArtifact().abi, functionName: "transfer", args: [address, units("7")] }) }]);
      await anvil.mine(5);
    } finally {
      await anvil.rpc("evm_setAutomine", [true]);
    }
    await settledAs(userId, ["COMPLETED"]);
    const logsBefore = server.logs.length;
    await anvil.reorg(CONFIRMATIONS, []);
    await until(async () => logLines(DEEP_REORG, logsBefore).length > 0, "the reorg's error line");
    await anvil.mine(2);
    await severalPolls();
    expect(logLines(DEEP_REORG, logsBefore)).toMatchObject([{ depth: CONFIRMATIONS, orphaned: 0 }]);
    expect(await credits(userId)).toEqual(["7"]);
    expect(await token.transfersTo(address)).toHaveLength(1);
  });

  it("a transfer mined again after its deposit FAILED is a new deposit, credited once", async () => {
    const { userId, address } = await custodialUser();
    const hash = await token.transfer(sender, address, units("12"));
    const raw = await rawOf(hash);
    await settledAs(userId, ["PENDING"]);
    await anvil.rollback(1);
    await anvil.mine(CONFIRMATIONS);
    await settledAs(userId, ["FAILED"]);
    // The same signed transaction comes back (from a mempool, say), long after.
    await anvil.rpc("eth_sendRawTransaction", [raw]);
    await anvil.mine(CONFIRMATIONS - 1);
    await settledAs(userId, ["COMPLETED", "FAILED"]);
    await anvil.mine(CONFIRMATIONS);
    await severalPolls();
    const all = await deposits(userId);
    expect(all.map((d) => d.transactionHash)).toEqual([hash, hash]);
    const completed = all.find((d) => d.status === "COMPLETED")!;
    expect(await token.transfersTo(address)).toHaveLength(1);
    expect(await ledgerOf(server, tenant, userId)).toEqual([{ type: "DEPOSIT", currency: "USDC", amount: "12", referenceId: completed.id }]);
  });
});

describe("one bad deposit is isolated", () => {
  it("a deposit too large for the ledger is FAILED and flagged, and the deposits after it complete", async () => {
    const [big, small] = [await custodialUser(), await custodialUser()];
    // 9e19 tokens twice: the second cannot be added to the first in the ledger's NUMERIC(38,18).
    const huge = units("90000000000000000000");
    await token.mint(big.address, huge);
    await token.mint(big.address, huge);
    await token.transfer(sender, small.address, units("5"));
    await anvil.mine(CONFIRMATIONS);
    await settledAs(small.userId, ["COMPLETED"]);
    await settledAs(big.userId, ["COMPLETED", "FAILED"]);
    expect(await credits(small.userId)).toEqual(["5"]);
    const failed = (await deposits(big.userId)).find((d) => d.status === "FAILED")!;
    expect((await server.app.db.prisma.deposit.findUniqueOrThrow({ where: { id: failed.id } })).failureReason).toMatch(/more than the ledger can hold/);
    expect((await chainRow(failed.id)).flag).toBe("UNSETTLEABLE");
    expect(await credits(big.userId)).toEqual(["90000000000000000000"]);
    expect(logLines("deposit too large for the ledger")).toMatchObject([{ level: 50, depositId: failed.id }]);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/^chain_deposits_flagged\{network="BASE",flag="UNSETTLEABLE"\} 1$/m);
  });
});

describe("a reorg deeper than the depth takes a completed deposit's transfer", () => {
  it("the deposit is flagged ORPHANED, logged once, counted; the address's later deposits are still swept", { timeout: patient(120_000) }, async () => {
    const { userId, address } = await custodialUser();
    await token.transfer(sender, address, units("25"));
    await anvil.mine(CONFIRMATIONS - 1);
    await settledAs(userId, ["COMPLETED"]);
    const [orphan] = await deposits(userId);
    const logsBefore = server.logs.length;
    await rollBackPast(orphan.id); // the transfer is gone for good
    await until(async () => (await chainRow(orphan.id)).flag === "ORPHANED", "the deposit to be flagged");
    expect(await token.balanceOf(address)).toBe(0n);

    // A genuine deposit to the same address reaches the sweep threshold: it is swept, the orphan is not
    // (the treasury funds its gas: its balance set again, as the rollback may have taken the first one).
    await anvil.setBalance(custody.treasury, 10n ** 18n);
    await token.transfer(sender, address, units(String(SWEEP_MIN)));
    await anvil.mine(CONFIRMATIONS);
    // Blocks keep coming while the sender funds the sweep's gas and sweeps (whether it waits for a depth or not).
    // Swept: the address's one sweep is confirmed, its transfer of exactly the genuine deposit to the treasury is
    // on the chain, and the address holds nothing. (Not the treasury's balance: another address's sweep, sent
    // again after this test's reorg dropped its gas, may reach it meanwhile.)
    const swept = async () => {
      const sweeps = (await server.app.db.prisma.chainSend.findMany({ where: { purpose: "SWEEP" } })).filter((send) => send.fromAddress.toLowerCase() === address.toLowerCase());
      if (sweeps.length !== 1 || sweeps[0].status !== "CONFIRMED") return false;
      const toTreasury = await token.transfersTo(custody.treasury);
      return toTreasury.some((t) => t.transactionHash === sweeps[0].transactionHash && t.value === units(String(SWEEP_MIN))) && (await token.balanceOf(address)) === 0n;
    };
    await until(async () => (await swept()) || void (await anvil.mine(1)), "the sweep of the genuine deposit", 60_000, 500);
    await anvil.mine(CONFIRMATIONS);
    await severalPolls();
    expect(logLines(DEEP_REORG, logsBefore)).toMatchObject([{ level: 50, orphaned: 1, depositIds: [orphan.id] }]);
    expect(logLines("deposit address holds less", logsBefore)).toEqual([]);
    // The credit stays (docs/chain.md): the operator settles it; the books show it.
    expect((await credits(userId)).sort()).toEqual(["25", String(SWEEP_MIN)]);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/^chain_deposits_flagged\{network="BASE",flag="ORPHANED"\} 1$/m);
    expect(metrics).toMatch(/^chain_deposits_orphaned_total\{network="BASE"\} [1-9]/m);
  });

  it("a sweep queued for it and not yet signed is withdrawn: the address's later deposit gets a sweep of its own, confirmed", { timeout: patient(120_000) }, async () => {
    const { userId, address } = await custodialUser();
    const sweepsOf = async () =>
      (await server.app.db.prisma.chainSend.findMany({ where: { purpose: "SWEEP" }, orderBy: { createdAt: "asc" } })).filter((send) => send.fromAddress.toLowerCase() === address.toLowerCase());
    // The blocks that complete the deposit ask 50 gwei, above the sweeps' ceiling (a tenth of 100): its sweep is
    // queued and waits (FEES), never signed nor estimated (no race with the rollback below). The rollback takes those blocks.
    await token.transfer(sender, address, units(String(SWEEP_MIN)));
    await anvil.rpc("anvil_setNextBlockBaseFeePerGas", [`0x${(50n * 10n ** 9n).toString(16)}`]);
    await anvil.mine(CONFIRMATIONS - 1);
    await settledAs(userId, ["COMPLETED"]);
    const [orphan] = await deposits(userId);
    await until(async () => (await sweepsOf())[0]?.waitingFor === "FEES", "the deposit's sweep to wait for lower fees");
    const [queued] = await sweepsOf();
    expect((await chainRow(orphan.id)).sweepId).toBe(queued.id);

    await rollBackPast(orphan.id); // the transfer is gone for good
    await until(async () => (await chainRow(orphan.id)).flag === "ORPHANED", "the deposit to be flagged");
    // The queued sweep waits for it no more: withdrawn, never signed, and the orphan is linked to no sweep.
    const withdrawn = await server.app.db.prisma.chainSend.findUniqueOrThrow({ where: { id: queued.id } });
    expect(withdrawn).toMatchObject({ status: "FAILED", transactionHash: null, waitingFor: null });
    expect(withdrawn.failureReason).toMatch(/withdrawn before it was signed: a deposit it was to move was flagged ORPHANED/);
    expect((await chainRow(orphan.id)).sweepId).toBeNull();

    // The treasury funded, a genuine deposit to the same address reaching the threshold is swept by a sweep of its own.
    await anvil.setBalance(custody.treasury, 10n ** 18n);
    await token.transfer(sender, address, units(String(SWEEP_MIN)));
    await anvil.mine(CONFIRMATIONS);
    await settledAs(userId, ["COMPLETED", "COMPLETED"]);
    const genuine = (await deposits(userId)).find((d) => d.id !== orphan.id)!;
    const sweepOfGenuine = async () => {
      const { sweepId } = await chainRow(genuine.id);
      return sweepId === null ? null : server.app.db.prisma.chainSend.findUniqueOrThrow({ where: { id: sweepId } });
    };
    await until(async () => (await sweepOfGenuine())?.status === "CONFIRMED" || void (await anvil.mine(1)), "the genuine deposit's sweep to be confirmed", 60_000, 500);
    const sweep = (await sweepOfGenuine())!;
    expect(sweep.id).not.toBe(queued.id);
    expect(sweep.amount.toFixed()).toBe(String(SWEEP_MIN));
    const toTreasury = await token.transfersTo(custody.treasury);
    expect(toTreasury.filter((t) => t.transactionHash === sweep.transactionHash).map((t) => t.value)).toEqual([units(String(SWEEP_MIN))]);
    expect(await token.balanceOf(address)).toBe(0n);
    expect((await sweepsOf()).map((s) => s.status)).toEqual(["FAILED", "CONFIRMED"]);
    expect((await chainRow(orphan.id)).sweepId).toBeNull();
  });
});
