import { join } from "node:path";
import { treasuryAccount } from "../../src/providers/treasury.js";
import type { NetworkName } from "../../src/chain/networks.js";
import { loadConfig } from "../../src/config.js";
import { makePrivateDir } from "../../src/db/private-dir.js";
import { loadOrCreateMasterKey } from "../../src/providers/custodian.js";
import { mineWhileWaiting } from "./blocks.js";
import { startNode } from "./node.js";
import { readSettings, settingsVariables, writeSettings } from "./settings.js";
import { DEVNET_TOKENS, ensureTokens, fund } from "./tokens.js";

export type StartOptions = { port: number; chainId: number; network: NetworkName; confirmations: number; blockTimeMs: number };

/** What the test treasury and the faucet are topped up to at each start. */
const TREASURY_FUNDS = { ether: "1000", perToken: "1000000" };

/**
 * `npm run devnet`: the local chain, its tokens and funds, its settings in DATA_DIR/devnet.env; runs
 * until SIGINT or SIGTERM, then stops anvil (which saves the chain).
 */
export async function start(options: StartOptions): Promise<void> {
  // The server's own settings and key: devnet funds the test treasury the server derives (m/44'/60'/3'/0/0
  // of the master key kept in DATA_DIR, or CUSTODIAN_MASTER_KEY), so both must see the same DATA_DIR.
  const config = loadConfig();
  if (config.env === "production") throw new Error("npm run devnet is a development tool: with NODE_ENV=production the server reads no devnet.env");
  // Everything devnet and anvil write under DATA_DIR stays private to this OS user, as the server's files are.
  process.umask(0o077);
  makePrivateDir(config.dataDir);
  const masterKey = loadOrCreateMasterKey({ configured: config.custodianMasterKey, dataDir: config.dataDir, encryptionKey: config.encryptionKey });
  const treasury = treasuryAccount(masterKey, "test").address;

  const stateFile = join(config.dataDir, "devnet-chain.json");
  const node = await startNode({ port: options.port, chainId: options.chainId, stateFile });
  let stopBlocks: (() => Promise<void>) | undefined;
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    await stopBlocks?.();
    await node.stop();
    process.exit(code);
  };
  process.on("SIGINT", () => void stop(0));
  process.on("SIGTERM", () => void stop(0));
  void node.exited.then((output) => {
    if (stopping) return;
    process.stderr.write(`anvil stopped:\n${output}\n`);
    void stop(1);
  });

  try {
    const [faucet] = await node.accounts();
    const tokens = await ensureTokens(node, faucet, readSettings(config.dataDir)?.tokens ?? {});
    await fund(node, faucet, tokens, treasury, TREASURY_FUNDS);
    await fund(node, faucet, tokens, faucet, TREASURY_FUNDS);
    const settings = { network: options.network, rpcUrl: node.url, tokens, confirmations: options.confirmations };
    const file = writeSettings(config.dataDir, settings);
    if (options.blockTimeMs > 0) stopBlocks = mineWhileWaiting(node, { confirmations: options.confirmations, intervalMs: options.blockTimeMs });
    const head = await node.client.getBlockNumber();
    const tokenList = DEVNET_TOKENS.map((token) => `${token.symbol} ${tokens[token.symbol]} (${token.decimals} decimals)`);
    process.stdout.write(
      [
        `devnet: anvil on ${node.url}, chain id ${options.chainId}, head ${head}: ${options.network} is test mode's chain`,
        ...tokenList.map((line) => `  token    ${line}`),
        `  treasury ${treasury} (test mode's, derived from the master key in ${config.dataDir}): ${TREASURY_FUNDS.ether} ETH, ${TREASURY_FUNDS.perToken} of each token`,
        `  faucet   ${faucet} (anvil's first account): pays \`npm run devnet -- deposit\``,
        "",
        `Settings written to ${file}; the server reads them at start from the same DATA_DIR (environment variables win):`,
        ...settingsVariables(settings).map(([name, value]) => `  ${name}=${value}`),
        "",
        "Now start the server (npm start) with the same DATA_DIR, and in another terminal:",
        "  npm run devnet -- deposit <userId|address> <amount> [USDC|USDT|DAI]    (a userId needs API_KEY)",
        "  npm run devnet -- balance <address>",
        "  npm run devnet -- mine [n]",
        options.blockTimeMs > 0
          ? `Each transaction is mined at once; then a block every ${options.blockTimeMs / 1000} s until it is ${options.confirmations} deep.`
          : `Each transaction is mined at once; mine the ${options.confirmations - 1} blocks that confirm it with \`npm run devnet -- mine\`.`,
        `Ctrl-C stops the node; the chain is saved in ${stateFile} and loaded again at the next start.`,
        "devnet ready",
        "",
      ].join("\n"),
    );
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    await stop(1);
  }
}
