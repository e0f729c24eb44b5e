import { spawn, execFile, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { testDatabaseUrl, type TestServer } from "./support/server.js";
import { createUser, gql, rest } from "./support/http.js";
import { patient } from "./support/patience.js";

const ROOT = join(import.meta.dirname, "..");
const SETTLE_MS = 1200;
const NGN_DEPOSITS = 4;
const USDC_DEPOSITS = 4;

const dataDir = mkdtempSync(join(tmpdir(), "fintech-crash-"));
const env = {
  ...process.env,
  NODE_ENV: "development",
  PORT: "0",
  HOST: "127.0.0.1",
  DATA_DIR: dataDir,
  LOG_LEVEL: "info",
  SANDBOX: "on",
  SANDBOX_SETTLE_MS: String(SETTLE_MS),
  RATE_LIMIT_PER_MINUTE: "100000",
  DATABASE_URL: testDatabaseUrl ?? "",
};
const children = new Set<ChildProcess>();

afterAll(() => {
  for (const child of children) child.kill("SIGKILL");
  rmSync(dataDir, { recursive: true, force: true });
});

/** The real server as its own process (`node --import tsx src/main.ts`); resolves once it logs its URL. */
function startProcess(): Promise<{ child: ChildProcess; server: TestServer }> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  children.add(child);
  child.once("exit", () => children.delete(child));
  return new Promise((resolve, reject) => {
    let output = "";
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const started = output.split("\n").find((line) => line.includes('"server started"'));
      if (!started) return;
      child.stdout!.off("data", onData);
      child.stdout!.resume();
      // Only `url` is read from it: the helpers need nothing else of a TestServer.
      resolve({ child, server: { url: JSON.parse(started).url } as TestServer });
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.once("exit", (code, signal) => reject(new Error(`server exited (${code ?? signal}) before starting:\n${output}`)));
  });
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once("exit", () => resolve()));
}

async function deposits(server: TestServer, headers: Record<string, string>, userId: string) {
  const res = await rest(server, "GET", `/v1/transactions/deposits/${userId}`, { headers });
  expect(res.status).toBe(200);
  return res.body as { id: string; status: string; currency: string }[];
}

describe("deposits across a crash", () => {
  it("every deposit ends COMPLETED exactly once after kill -9 mid-settlement and a restart", async () => {
    const created = await promisify(execFile)(process.execPath, ["--import", "tsx", "scripts/create-client.ts", "--email", `crash-${crypto.randomUUID()}@example.com`], { cwd: ROOT, env });
    const apiKey = /api key (\S+)/.exec(created.stdout)![1];
    const headers = { "x-api-key": apiKey };

    let { child, server } = await startProcess();
    const userId = await createUser(server, { headers });
    const account = await rest(server, "POST", "/v1/virtual-account/ngn", {
      headers,
      body: { userId, address: "0x000000000000000000000000000000000000dEaD" },
    });
    expect(account.status).toBe(200);
    // Spread out, so that settlements are still due when the first ones complete.
    for (let i = 0; i < NGN_DEPOSITS + USDC_DEPOSITS; i++) {
      const body = i % 2 ? { userId, currency: "USDC", amount: `${i + 1}.5` } : { userId, currency: "NGN", amount: `${(i + 1) * 1000}.25` };
      const res = await rest(server, "POST", "/v1/sandbox/deposits", { headers, body });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      await new Promise((resolve) => setTimeout(resolve, 120));
    }

    let statuses: string[] = [];
    const deadline = Date.now() + patient(15_000);
    while (!statuses.includes("COMPLETED") && Date.now() < deadline) {
      statuses = (await deposits(server, headers, userId)).map((d) => d.status);
    }
    child.kill("SIGKILL");
    await exited(child);
    expect(statuses).toContain("COMPLETED");
    expect(statuses).toContain("PENDING");

    ({ child, server } = await startProcess());
    let after: { id: string; status: string; currency: string }[] = [];
    const settled = Date.now() + patient(20_000);
    do {
      await new Promise((resolve) => setTimeout(resolve, 200));
      after = await deposits(server, headers, userId);
    } while (after.some((d) => d.status === "PENDING") && Date.now() < settled);
    expect(after.map((d) => d.status)).toEqual(Array(NGN_DEPOSITS + USDC_DEPOSITS).fill("COMPLETED"));

    const ledger = await gql(server, `query ($id: ID!) { user(id: $id) { ledgerPage(limit: 1000) { type referenceId } } }`, { id: userId }, headers);
    const entries = ledger.body.data!.user.ledgerPage as { type: string; referenceId: string }[];
    for (const deposit of after) {
      expect(entries.filter((e) => e.type === "DEPOSIT" && e.referenceId === deposit.id), deposit.id).toHaveLength(1);
    }
    expect(entries.filter((e) => e.type === "CONVERSION_IN")).toHaveLength(NGN_DEPOSITS);
    expect(entries.filter((e) => e.type === "TRANSFER_OUT")).toHaveLength(NGN_DEPOSITS);
    const verification = await rest(server, "GET", `/v1/transactions/ledger/${userId}/verify`, { headers });
    expect(verification.body.valid).toBe(true);

    child.kill("SIGTERM");
    await exited(child);
    expect(child.exitCode).toBe(0);
  }, patient(120_000));
});
