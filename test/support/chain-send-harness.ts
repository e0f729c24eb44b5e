import { Decimal } from "decimal.js";
import { expect } from "vitest";
import type { Address } from "viem";
import { sendFor, type ChainSend, type SendPurpose } from "../../src/chain/send-records.js";
import { deployToken, liveBaseEnv, startAnvil, testCustody, type Anvil, type Token } from "./chain.js";
import { createUser, rest } from "./http.js";
import { fund } from "./ledger.js";
import { newTenant, startServer, type Tenant, type TestServer } from "./server.js";
import { until } from "./until.js";

export const ETH = 10n ** 18n;
/** The test token's base units (6 decimals) of a whole amount. */
export const units = (amount: string) => BigInt(new Decimal(amount).times(1e6).toFixed(0));

export type Withdrawal = { reference: string; status: string; amount: number; failureReason: string | null; transactionHash?: string };

/**
 * A live BASE on a fresh anvil (our token as its USDC, a funded treasury) and a server sending on it: what the
 * tests of the sender's adversities share. `restart` starts the server again with other settings (the sender
 * lease is handed over); every helper reads the current server.
 */
export class SendHarness {
  server!: TestServer;
  tenant!: Tenant;
  readonly custody = testCustody();

  private constructor(
    readonly anvil: Anvil,
    readonly token: Token,
    private readonly baseEnv: Record<string, string>,
  ) {}

  static async start(env: Record<string, string> = {}): Promise<SendHarness> {
    const anvil = await startAnvil();
    const token = await deployToken(anvil, { symbol: "USDC", decimals: 6 });
    const harness = new SendHarness(anvil, token, env);
    await token.mint(harness.custody.treasury, units("1000000"));
    await anvil.setBalance(harness.custody.treasury, 100n * ETH);
    await harness.restart();
    return harness;
  }

  get treasury(): Address {
    return this.custody.treasury;
  }

  env(overrides: Record<string, string> = {}): Record<string, string> {
    return { ...liveBaseEnv(this.anvil, this.token, { CHAIN_CONFIRMATIONS_BASE: "3", CHAIN_REPLACE_AFTER_MS: "600000", ...this.baseEnv, ...overrides }), CUSTODIAN_MASTER_KEY: this.custody.masterKey };
  }

  /** (Re)starts the server with these settings over the harness's own; `whileDown` runs between the stop and the start. */
  async restart(overrides: Record<string, string> = {}, whileDown?: () => Promise<void>) {
    await this.server?.stop();
    await whileDown?.();
    this.server = await startServer({ env: this.env(overrides) });
    this.tenant = await newTenant(this.server, "live");
    await until(async () => this.server.app.services.chain.chainIdOf("live", "BASE") !== undefined, "the RPC's chain id");
  }

  /** The server's chain workers stopped (its sender's lease released) while `whileDown` runs, then started again. */
  async chainPaused(whileDown: () => Promise<void>) {
    const rail = this.server.app.services.chain;
    await rail.stop();
    try {
      await whileDown();
    } finally {
      rail.start();
    }
  }

  /** `work` with anvil mining nothing until it is done (transactions wait in its pool). */
  async withAutomineOff<T>(work: () => Promise<T>): Promise<T> {
    await this.anvil.rpc("evm_setAutomine", [false]);
    try {
      return await work();
    } finally {
      await this.anvil.rpc("evm_setAutomine", [true]);
    }
  }

  async stop() {
    await this.server?.stop();
    await this.anvil?.stop();
  }

  async fundedUser(amount: string): Promise<string> {
    const userId = await createUser(this.server, this.tenant);
    await fund(this.server, this.tenant.clientId, userId, "USDC", amount);
    return userId;
  }

  /** Requests a USDC withdrawal on BASE; its reference. */
  async withdraw(userId: string, amount: number, to: Address): Promise<string> {
    const res = await rest(this.server, "POST", "/v1/withdrawals/usdc", {
      headers: this.tenant.headers,
      body: { userId, amount, walletAddress: to, network: "BASE", chainId: this.anvil.chainId },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.reference as string;
  }

  async withdrawal(reference: string): Promise<Withdrawal> {
    const res = await rest(this.server, "GET", `/v1/withdrawals/${reference}`, { headers: this.tenant.headers });
    expect(res.status).toBe(200);
    return res.body;
  }

  withdrawalIn(reference: string, status: string, timeoutMs?: number) {
    return until(async () => {
      const found = await this.withdrawal(reference);
      return found.status === status ? found : undefined;
    }, `withdrawal ${reference} ${status}`, timeoutMs);
  }

  /** Mines a block per poll until every withdrawal is `status` (the depth needs blocks beyond automine's one per transaction). */
  mineUntil(references: string[], status: string, timeoutMs?: number) {
    return until(async () => {
      const all = await Promise.all(references.map((reference) => this.withdrawal(reference)));
      if (all.every((found) => found.status === status)) return all;
      await this.anvil.mine(1);
      return undefined;
    }, `withdrawals ${references.join(", ")} ${status}`, timeoutMs);
  }

  /** The product's record of a send. */
  sendOf(purpose: SendPurpose, purposeId: string): Promise<ChainSend | undefined> {
    return sendFor(this.server.app.db.sql, purpose, purposeId);
  }

  sendIn(purpose: SendPurpose, purposeId: string, ready: (send: ChainSend) => boolean, what: string, timeoutMs?: number) {
    return until(async () => {
      const send = await this.sendOf(purpose, purposeId);
      return send && ready(send) ? send : undefined;
    }, `the ${purpose} send of ${purposeId} ${what}`, timeoutMs);
  }

  /** A sample of GET /metrics (the BASE series with these labels); undefined when absent. */
  async metric(name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
    const text = await (await fetch(`${this.server.url}/metrics`)).text();
    const wanted = Object.entries({ network: "BASE", ...labels }).map(([key, value]) => `${key}="${value}"`);
    for (const line of text.split("\n")) {
      const match = /^(\w+)\{([^}]*)\} (\S+)$/.exec(line);
      if (match?.[1] === name && wanted.every((pair) => match[2].split(",").includes(pair))) return Number(match[3]);
    }
    return undefined;
  }

  /** The server's log lines (JSON) whose message is `msg`. */
  logLines(msg: string): Record<string, unknown>[] {
    return this.server.logs.flatMap((chunk) => chunk.split("\n")).flatMap((line) => {
      if (!line.includes(msg)) return [];
      const parsed = JSON.parse(line) as Record<string, unknown>;
      return parsed.msg === msg ? [parsed] : [];
    });
  }

  /** The chain's count of the treasury's mined transactions. */
  treasuryCount(): Promise<number> {
    return this.anvil.client.getTransactionCount({ address: this.treasury, blockTag: "latest" });
  }

  /** The next nonce the platform stores for the treasury. */
  async storedNonce(): Promise<bigint | undefined> {
    const row = await this.server.app.db.prisma.chainNonce.findUnique({ where: { chainId_address: { chainId: this.anvil.chainId, address: this.treasury } } });
    return row?.next;
  }
}
