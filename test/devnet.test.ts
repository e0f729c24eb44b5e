import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { createPublicClient, erc20Abi, getAddress, http, parseEventLogs, type Address } from "viem";
import { afterAll, describe, expect, it } from "vitest";
import { freshAddress } from "./support/chain.js";
import { startServerProcess, type ServerProcess } from "./support/server-process.js";
import { until } from "./support/until.js";

// The README's on-chain steps as a newcomer runs them, each its own process on one fresh DATA_DIR:
// `npm run devnet`, the server (embedded database, its first-run key, no chain setting in its
// environment: it reads DATA_DIR/devnet.env), `npm run devnet -- deposit <userId> 25`, a USDC
// withdrawal over REST with the test key, and the transfer read from the node's own token logs.
const TSX = join(process.cwd(), "node_modules/.bin/tsx");
const parent = mkdtempSync(join(tmpdir(), "fintech-devnet-"));
const dataDir = join(parent, "data");
let devnet: ChildProcess | undefined;
let server: ServerProcess | undefined;

afterAll(async () => {
  await server?.stop();
  if (devnet && devnet.exitCode === null && devnet.signalCode === null) {
    const exited = new Promise((resolve) => devnet!.once("exit", resolve));
    devnet.kill("SIGINT");
    await exited;
  }
  rmSync(parent, { recursive: true, force: true });
});

async function freePort(): Promise<number> {
  const probe = createServer().listen(0, "127.0.0.1");
  await new Promise((resolve) => probe.once("listening", resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** `npm run devnet -- --port <port>`, resolved once it prints "devnet ready". */
async function startDevnet(port: number): Promise<string[]> {
  const output: string[] = [];
  devnet = spawn(TSX, ["scripts/devnet.ts", "--port", String(port)], { cwd: process.cwd(), env: { PATH: process.env.PATH, DATA_DIR: dataDir }, stdio: ["ignore", "pipe", "pipe"] });
  devnet.stderr!.on("data", (chunk) => output.push(String(chunk)));
  await new Promise<void>((resolve, reject) => {
    devnet!.once("exit", (code) => reject(new Error(`devnet exited (${code}):\n${output.join("\n")}`)));
    createInterface({ input: devnet!.stdout! }).on("line", (line) => {
      output.push(line);
      if (line === "devnet ready") resolve();
    });
  });
  return output;
}

/** One run of `npm run devnet -- <command>`; its output. */
async function devnetCommand(args: string[], env: Record<string, string> = {}): Promise<string> {
  const { stdout } = await promisify(execFile)(TSX, ["scripts/devnet.ts", ...args], { cwd: process.cwd(), env: { PATH: process.env.PATH, DATA_DIR: dataDir, ...env }, timeout: 60_000 });
  return stdout;
}

async function call(method: string, path: string, apiKey: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server!.url}${path}`, { method, headers: { "x-api-key": apiKey, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: response.status, body: await response.json() };
}

/** A line `NAME=value` of the settings devnet wrote. */
const setting = (name: string) => new RegExp(`^${name}=(.+)$`, "m").exec(readFileSync(join(dataDir, "devnet.env"), "utf8"))?.[1];

describe("npm run devnet and the README's on-chain steps", { timeout: 240_000 }, () => {
  it("a deposit sent with `devnet deposit <userId>` is credited, and a USDC withdrawal with the test key is a transfer from the test treasury mined on the node", async () => {
    const printed = await startDevnet(await freePort());
    expect(printed.join("\n")).toContain("CHAIN_TEST_RPC_URL_BASE=http://127.0.0.1:");
    // The server's environment names no chain (and its secrets are generated in DATA_DIR, as on a
    // newcomer's machine): the test chain comes from DATA_DIR/devnet.env alone.
    server = await startServerProcess({ DATA_DIR: dataDir, ENCRYPTION_KEY: "", CHAIN_POLL_MS: "100" });
    const apiKey = /fpk_test_[0-9a-f]+\.[\w-]+/.exec(server.output.join("\n"))?.[0];
    expect(apiKey, "the first run's key").toBeTruthy();

    const user = await call("POST", "/v1/user", apiKey!, { email: `devnet-${crypto.randomUUID()}@example.com`, firstName: "Ada", lastName: "Lovelace", phoneNumber: "+14155552671", dob: "1990-05-17" });
    expect(user.status, JSON.stringify(user.body)).toBe(201);
    const userId = user.body.id as string;
    const sent = await devnetCommand(["deposit", userId, "25"], { API_KEY: apiKey!, BASE_URL: server.url });
    expect(sent).toMatch(/^sent 25 USDC to 0x[0-9a-fA-F]{40} \(user /);

    const deposit = await until(async () => {
      const deposits = (await call("GET", `/v1/transactions/deposits/${userId}`, apiKey!)).body as { status: string; amount: number; currency: string }[];
      return deposits.find((found) => found.status === "COMPLETED");
    }, "the devnet deposit COMPLETED", 90_000, 250);
    expect(deposit).toMatchObject({ amount: 25, currency: "USDC" });

    const networks = (await call("GET", "/v1/networks", apiKey!)).body as { network: string; mode: string; chainId: number }[];
    const base = networks.find((network) => network.network === "BASE")!;
    expect(base.mode).toBe("test");
    const to = freshAddress();
    const withdrawal = await call("POST", "/v1/withdrawals/usdc", apiKey!, { userId, amount: 10, walletAddress: to, network: "BASE", chainId: base.chainId });
    expect(withdrawal.status, JSON.stringify(withdrawal.body)).toBe(200);
    await until(async () => (await call("GET", `/v1/withdrawals/${withdrawal.body.reference}`, apiKey!)).body.status === "COMPLETED", "the withdrawal COMPLETED", 90_000, 250);

    // What the node holds, read from it: one transfer of exactly 10 USDC, from the test treasury.
    const node = createPublicClient({ transport: http(setting("CHAIN_TEST_RPC_URL_BASE")) });
    const usdc = getAddress(setting("CHAIN_TEST_TOKEN_BASE_USDC")!);
    const logs = parseEventLogs({ abi: erc20Abi, eventName: "Transfer", logs: await node.getLogs({ address: usdc, fromBlock: 0n, toBlock: "latest" }) });
    const toUser = logs.filter((log) => log.args.to === to);
    expect(toUser.map((log) => log.args.value)).toEqual([10_000_000n]);
    const treasury = /treasury (0x[0-9a-fA-F]{40})/.exec(printed.join("\n"))![1] as Address;
    expect(toUser[0].args.from).toBe(getAddress(treasury));
    expect(await devnetCommand(["balance", to])).toContain("USDC 10\n");
  });
});
