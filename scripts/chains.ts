// npm run chains [-- --json]
// The operator's view of each live network (SPEC §14): head and synced block, lag, the treasury's
// address and its native and token balances, and from the database the sends not yet final (and the
// oldest one's age) and the completed deposits not yet swept. Uses the server's settings (CHAIN_*, the
// database, the master key). What the database tells is null while a running server holds the
// embedded one. Then each mode's reconciliation per token (docs/chain.md, Reconciliation): what its
// chains hold against what the platform owes, and the difference (a shortfall is an ERROR line).
import { parseArgs } from "node:util";
import { erc20Abi, formatEther, formatUnits, type Address } from "viem";
import { chainClient, tokenDecimals } from "../src/chain/clients.js";
import { chainNetworks, type NetworkSettings } from "../src/chain/networks.js";
import { reconcile, type TokenReconciliation } from "../src/chain/reconciliation.js";
import { cursorsOf } from "../src/chain/records.js";
import { sendBacklog, type SendBacklog } from "../src/chain/send-records.js";
import { checkToken, type TokenAvailability } from "../src/chain/tokens.js";
import { treasuryAccount } from "../src/providers/treasury.js";
import { loadConfig } from "../src/config.js";
import { loadOrCreateMasterKey } from "../src/providers/custodian.js";

type Report = {
  network: string;
  /** The client mode the network serves: live (CHAIN_RPC_URL_*) or test (CHAIN_TEST_RPC_URL_*). */
  mode: "live" | "test";
  rpc: "up" | "down";
  error?: string;
  chainId: number | null;
  confirmations: number;
  headBlock: number | null;
  syncedBlock: number | null;
  lag: number | null;
  treasury: { address: Address; native: string | null; tokens: Record<string, string | null> };
  /** Whether each configured token works on the chain (code at its address, decimals() answers), and why not (null while the RPC is down). */
  tokenAvailability: Record<string, TokenAvailability | null>;
  unsweptDeposits: number | null;
  pendingSends: number | null;
  /** Seconds since the oldest send not yet confirmed or failed was queued (null when none). */
  oldestPendingSeconds: number | null;
  /** Sends a reorg deeper than the confirmation depth took off the chain after their confirmation, not yet confirmed again. */
  reorgedSends: number | null;
  /** Sends whose nonce a transaction the platform did not sign took (ORPHANED): for the operator. */
  orphanedSends: number | null;
  /**
   * The reconciliation of each token this network lists, for its whole mode (every network of the mode on a
   * chain summed: the ledger does not say on which network a balance is); null when it cannot be read now.
   */
  reconciliation: Record<string, TokenReconciliation | null>;
};

const config = loadConfig();
const { values } = parseArgs({ options: { json: { type: "boolean", default: false } } });
const masterKey = loadOrCreateMasterKey({ configured: config.custodianMasterKey, dataDir: config.dataDir, encryptionKey: config.encryptionKey });
const treasuries = { live: treasuryAccount(masterKey, "live").address, test: treasuryAccount(masterKey, "test").address };
const modeOfNetwork = (network: NetworkSettings) => (network.livemode ? "live" : "test");

type Books = { reports: TokenReconciliation[] } | { error: string };
type FromDatabase = { synced: Map<number, number>; backlog: Map<number, SendBacklog>; books: Record<"live" | "test", Books> };

/** Each mode's books, reconciled over its networks on a chain; not when one of them does not answer. */
async function booksOf(sql: Parameters<typeof reconcile>[0], networks: NetworkSettings[], up: boolean[], mode: "live" | "test"): Promise<Books> {
  const ofMode = networks.filter((network) => modeOfNetwork(network) === mode);
  if (ofMode.some((network) => !up[networks.indexOf(network)])) return { error: "an RPC of the mode is down" };
  const reconciled = ofMode.map((settings) => {
    const client = chainClient(settings, config.chain);
    return { settings, client, treasury: treasuries[mode], decimalsOf: tokenDecimals(client) };
  });
  return reconcile(sql, mode, reconciled).then(
    (reports) => ({ reports }),
    (err: Error) => ({ error: err.message.split("\n")[0] }),
  );
}

/** The synced blocks, the sends' backlog by chain id and the books, from the database (undefined when the embedded one is held by a running server). */
async function fromDatabase(chainIds: number[], networks: NetworkSettings[], up: boolean[]): Promise<FromDatabase | undefined> {
  // Loaded here, not at the top: with no network configured the script never needs them (Prisma, PGlite).
  const [{ embeddedDataDir, openDatabase }, { DataDirBusyError }, { createLogger }] = await Promise.all([
    import("../src/db/database.js"),
    import("../src/db/embedded-lock.js"),
    import("../src/logger.js"),
  ]);
  try {
    const db = await openDatabase({ url: config.databaseUrl, embeddedDir: embeddedDataDir(config.dataDir), role: "tool", logger: createLogger("warn") });
    try {
      const [cursors, backlog, live, test] = await Promise.all([
        cursorsOf(db.sql, chainIds),
        sendBacklog(db.sql, chainIds),
        booksOf(db.sql, networks, up, "live"),
        booksOf(db.sql, networks, up, "test"),
      ]);
      return {
        synced: new Map(cursors.map((cursor) => [cursor.chainId, Number(cursor.blockNumber)])),
        backlog: new Map(backlog.map((row) => [row.chainId, row])),
        books: { live, test },
      };
    } finally {
      await db.close();
    }
  } catch (err) {
    if (err instanceof DataDirBusyError) return undefined;
    throw err;
  }
}

async function fromChain(network: NetworkSettings) {
  const client = chainClient(network, config.chain);
  const treasury = treasuries[modeOfNetwork(network)];
  const [chainId, head, native, tokens] = await Promise.all([
    client.getChainId(),
    client.getBlockNumber(),
    client.getBalance({ address: treasury }),
    Promise.all(
      Object.entries(network.tokens).map(async ([symbol, address]) => {
        const check = await checkToken(client, address as Address);
        if (!check.available) return { symbol, balance: null, availability: check };
        const balance = await client.readContract({ address: address as Address, abi: erc20Abi, functionName: "balanceOf", args: [treasury] }).catch(() => null);
        return { symbol, balance: balance === null ? null : formatUnits(balance, check.decimals), availability: { available: true, reason: null } as const };
      }),
    ),
  ]);
  return {
    chainId,
    head: Number(head),
    native: formatEther(native),
    tokens: Object.fromEntries(tokens.map((token) => [token.symbol, token.balance])),
    tokenAvailability: Object.fromEntries(tokens.map((token) => [token.symbol, token.availability])),
  };
}

async function main() {
  const networks = chainNetworks(config.chain);
  if (networks.length === 0) {
    process.stdout.write(values.json ? "[]\n" : "No network on a chain: set CHAIN_RPC_URL_<NETWORK> (live mode) or CHAIN_TEST_RPC_URL_<NETWORK> (test mode; npm run devnet).\n");
    return;
  }
  const chain = await Promise.all(networks.map((network) => fromChain(network).catch((err: Error) => err)));
  const up = chain.map((answer) => !(answer instanceof Error));
  const database = await fromDatabase(chain.flatMap((answer) => (answer instanceof Error ? [] : [answer.chainId])), networks, up);
  const booksOfMode = (mode: "live" | "test") => (database ? database.books[mode] : { error: "the server holds the embedded database" });
  const reports: Report[] = networks.map((network, i) => {
    const answer = chain[i];
    const up = !(answer instanceof Error);
    const syncedBlock = up ? (database?.synced.get(answer.chainId) ?? null) : null;
    const backlog = up ? database?.backlog.get(answer.chainId) : undefined;
    const oldest = backlog?.oldestCreatedAt ? new Date(backlog.oldestCreatedAt).getTime() : undefined;
    return {
      network: network.name,
      mode: modeOfNetwork(network),
      rpc: up ? "up" : "down",
      ...(up ? {} : { error: answer.message.split("\n")[0] }),
      chainId: up ? answer.chainId : null,
      confirmations: network.confirmations,
      headBlock: up ? answer.head : null,
      syncedBlock,
      lag: up && syncedBlock !== null ? answer.head - syncedBlock : null,
      treasury: { address: treasuries[modeOfNetwork(network)], native: up ? answer.native : null, tokens: up ? answer.tokens : Object.fromEntries(Object.keys(network.tokens).map((symbol) => [symbol, null])) },
      tokenAvailability: up ? answer.tokenAvailability : Object.fromEntries(Object.keys(network.tokens).map((symbol) => [symbol, null])),
      unsweptDeposits: backlog?.unsweptDeposits ?? null,
      pendingSends: backlog?.pending ?? null,
      oldestPendingSeconds: oldest === undefined ? null : Math.max(0, (Date.now() - oldest) / 1000),
      reorgedSends: backlog?.reorgedSends ?? null,
      orphanedSends: backlog?.orphanedSends ?? null,
      reconciliation: Object.fromEntries(
        Object.keys(network.tokens).map((symbol) => {
          const books = booksOfMode(modeOfNetwork(network));
          return [symbol, "reports" in books ? (books.reports.find((report) => report.token === symbol) ?? null) : null];
        }),
      ),
    };
  });
  if (values.json) {
    process.stdout.write(`${JSON.stringify(reports, null, 2)}\n`);
    return;
  }
  // Why a synced block is missing: no chain id to look it up by, no access to the database, or no cursor yet.
  const syncedUnknown = (report: Report) =>
    report.rpc === "down" ? "?" : database ? "not started" : "? (the server holds the embedded database: GET /v1/networks)";
  for (const report of reports) {
    const lines = [
      `${report.network} [${report.mode} mode]  chain ${report.chainId ?? "?"}  RPC ${report.rpc}${report.error ? ` (${report.error})` : ""}`,
      `  head ${report.headBlock ?? "?"}  synced ${report.syncedBlock ?? syncedUnknown(report)}  lag ${report.lag ?? "?"}  confirmations ${report.confirmations}`,
      `  treasury ${report.treasury.address}  native ${report.treasury.native ?? "?"}  ${Object.entries(report.treasury.tokens).map(([symbol, balance]) => `${symbol} ${balance ?? "?"}`).join("  ")}`,
      ...Object.entries(report.tokenAvailability).flatMap(([symbol, availability]) => (availability?.available === false ? [`  token ${symbol} unavailable: ${availability.reason}`] : [])),
      `  unswept deposits ${report.unsweptDeposits ?? "?"}  pending sends ${report.pendingSends ?? "?"}${report.oldestPendingSeconds === null ? "" : `  oldest pending ${report.oldestPendingSeconds.toFixed(0)} s`}`,
      ...(report.reorgedSends || report.orphanedSends
        ? [`  ERROR: sends off the chain after their confirmation (deep reorg) ${report.reorgedSends}  orphaned sends ${report.orphanedSends}`]
        : []),
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
  }
  for (const mode of ["live", "test"] as const) {
    if (!networks.some((network) => modeOfNetwork(network) === mode)) continue;
    const books = booksOfMode(mode);
    process.stdout.write(`Reconciliation [${mode} mode] (every network of the mode on a chain, at the block its watcher finished)\n`);
    if ("error" in books) {
      process.stdout.write(`  not available: ${books.error}\n`);
      continue;
    }
    for (const report of books.reports) {
      const short = report.difference.startsWith("-");
      process.stdout.write(
        [
          `  ${report.token}  on chain ${report.onChain} (${report.networks.map((n) => `${n.network}: treasury ${n.treasury}, deposit addresses ${n.depositAddresses}`).join("; ")})`,
          `    liabilities ${report.liabilities} (users' balances ${report.userBalances}, client revenue ${report.clientRevenue}, withdrawals and forwards not yet on chain ${report.sendsNotOnChain})`,
          `    ${short ? "ERROR: shortfall" : report.difference === "0" ? "balanced" : "surplus"} ${report.difference}`,
        ].join("\n") + "\n",
      );
    }
  }
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
