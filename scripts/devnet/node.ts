import { spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { createPublicClient, createTestClient, getAddress, http, type Address, type PublicClient, type TestClient } from "viem";

/** A connection to the devnet's node: reads, and anvil's own methods (mine, set a balance). */
export type NodeConnection = { url: string; client: PublicClient; test: TestClient; accounts(): Promise<Address[]> };

export function connect(url: string): NodeConnection {
  // No caching: the head is read again right after mining.
  const client = createPublicClient({ transport: http(url), cacheTime: 0 }) as PublicClient;
  const test = createTestClient({ mode: "anvil", transport: http(url) });
  return { url, client, test, accounts: async () => ((await client.request({ method: "eth_accounts" as never })) as Address[]).map((account) => getAddress(account)) };
}

export type RunningNode = NodeConnection & {
  /** Resolves when anvil exits, with its last lines of output. */
  exited: Promise<string>;
  /** Stops anvil (SIGINT: it saves the chain to its state file first). */
  stop(): Promise<void>;
};

const ANVIL = join(import.meta.dirname, "../../node_modules/.bin/anvil");

/**
 * anvil (from the npm package @foundry-rs/anvil) on 127.0.0.1:`port`. Each transaction is mined at once
 * (automine); the chain is loaded from `stateFile` when it exists and saved there when anvil stops,
 * so a restarted devnet is the same chain (same blocks, same contracts and balances).
 */
export async function startNode(options: { port: number; chainId: number; stateFile: string }): Promise<RunningNode> {
  const args = ["--host", "127.0.0.1", "--port", String(options.port), "--chain-id", String(options.chainId), "--state", options.stateFile];
  const child = spawn(ANVIL, args, { stdio: ["ignore", "pipe", "pipe"] });
  const lastLines: string[] = [];
  const keep = (line: string) => {
    lastLines.push(line);
    if (lastLines.length > 20) lastLines.shift();
  };
  // Every line is read (anvil logs each transaction): a full pipe would block it.
  createInterface({ input: child.stderr! }).on("line", keep);
  const exited = new Promise<string>((resolve) => child.once("exit", () => resolve(lastLines.join("\n"))));
  await new Promise<void>((resolve, reject) => {
    void exited.then((output) => reject(new Error(`anvil exited before it listened on 127.0.0.1:${options.port}:\n${output}`)));
    createInterface({ input: child.stdout! }).on("line", (line) => {
      keep(line);
      if (line.startsWith(`Listening on 127.0.0.1:${options.port}`)) resolve();
    });
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGINT");
    await exited;
  };
  return { ...connect(`http://127.0.0.1:${options.port}`), exited, stop };
}
