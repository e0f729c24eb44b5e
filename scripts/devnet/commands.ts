import { erc20Abi, formatEther, formatUnits, getAddress, isAddress, parseUnits, type Address } from "viem";
import { loadDatabaseConfig } from "../../src/config.js";
import type { TokenSymbol } from "../../src/providers/chains.js";
import { connect, type NodeConnection } from "./node.js";
import { readSettings, settingsFile, type DevnetSettings } from "./settings.js";
import { callToken } from "./token.js";
import { decimalsOf, DEVNET_TOKENS, topUp } from "./tokens.js";

/** The running devnet, found through the settings it wrote to DATA_DIR/devnet.env. */
async function devnet(): Promise<{ settings: DevnetSettings; node: NodeConnection }> {
  const { dataDir } = loadDatabaseConfig();
  const settings = readSettings(dataDir);
  if (!settings) throw new Error(`no devnet settings in ${settingsFile(dataDir)}: start one with \`npm run devnet\` (with the same DATA_DIR)`);
  const node = connect(settings.rpcUrl);
  await node.client.getChainId().catch(() => {
    throw new Error(`no devnet answers at ${settings.rpcUrl} (from ${settingsFile(dataDir)}): is \`npm run devnet\` running?`);
  });
  return { settings, node };
}

/** A user's deposit address: their wallet's, from the server (POST /v1/wallet returns it, creating it at first). */
async function walletAddress(userId: string): Promise<Address> {
  const apiKey = process.env.API_KEY;
  if (!apiKey) throw new Error("a userId is looked up on the server: set API_KEY (and BASE_URL, default http://localhost:4000), or give the address");
  const base = process.env.BASE_URL ?? "http://localhost:4000";
  const response = await fetch(`${base}/v1/wallet`, { method: "POST", headers: { "x-api-key": apiKey, "content-type": "application/json" }, body: JSON.stringify({ userId }) });
  const body = (await response.json()) as { address?: string; error?: string };
  if (!response.ok || !body.address) throw new Error(`POST ${base}/v1/wallet: ${response.status} ${body.error ?? JSON.stringify(body)}`);
  return getAddress(body.address);
}

/** `deposit <userId|address> <amount> [token]`: the faucet sends a real transfer of the token. */
export async function deposit(recipient: string | undefined, amount: string | undefined, symbol = "USDC"): Promise<void> {
  if (!recipient || !amount) throw new Error("usage: npm run devnet -- deposit <userId|address> <amount> [USDC|USDT|DAI]");
  const token = DEVNET_TOKENS.find((candidate) => candidate.symbol === symbol.toUpperCase());
  if (!token) throw new Error(`token: ${symbol} is not one of ${DEVNET_TOKENS.map((candidate) => candidate.symbol).join(", ")}`);
  const decimals = new RegExp(`^\\d{1,15}(\\.\\d{1,${token.decimals}})?$`);
  if (!decimals.test(amount) || Number(amount) <= 0) throw new Error(`amount: ${amount} is not a positive amount of ${token.symbol} (at most ${token.decimals} decimals; for example 25 or 0.5)`);
  const units = parseUnits(amount, token.decimals);
  const { settings, node } = await devnet();
  const contract = settings.tokens[token.symbol];
  if (!contract) throw new Error(`${settingsFile(loadDatabaseConfig().dataDir)} names no ${token.symbol} contract`);
  const to = isAddress(recipient, { strict: false }) ? getAddress(recipient) : await walletAddress(recipient);
  const [faucet] = await node.accounts();
  await topUp(node, faucet, contract, faucet, units);
  const receipt = await callToken(node.client, faucet, contract, "transfer", [to, units]);
  process.stdout.write(
    `sent ${amount} ${token.symbol} to ${to}${to === recipient ? "" : ` (user ${recipient})`}\n` +
      `  transaction ${receipt.transactionHash} in block ${receipt.blockNumber}; the server credits it once ${settings.confirmations} blocks deep\n`,
  );
}

/** `mine [n]`: n blocks (default 1). */
export async function mine(count = "1"): Promise<void> {
  if (!/^\d{1,6}$/.test(count) || Number(count) < 1) throw new Error(`n: ${count} is not a number of blocks (1 to 999999)`);
  const { node } = await devnet();
  await node.test.mine({ blocks: Number(count) });
  process.stdout.write(`mined ${count}; head ${await node.client.getBlockNumber()}\n`);
}

/** `balance <address>`: its native coin and each devnet token, read from the node. */
export async function balance(address: string | undefined): Promise<void> {
  if (!address || !isAddress(address, { strict: false })) throw new Error("usage: npm run devnet -- balance <0x address>");
  const owner = getAddress(address);
  const { settings, node } = await devnet();
  const lines = [`${owner}  ETH ${formatEther(await node.client.getBalance({ address: owner }))}`];
  for (const [symbol, contract] of Object.entries(settings.tokens) as [TokenSymbol, Address][]) {
    const units = await node.client.readContract({ address: contract, abi: erc20Abi, functionName: "balanceOf", args: [owner] });
    lines.push(`  ${symbol} ${formatUnits(units, decimalsOf(symbol))}`);
  }
  process.stdout.write(`${lines.join("\n")}\n`);
}
