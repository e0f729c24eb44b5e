// npm run devnet [-- --port 8545 --network BASE --chain-id 31337 --confirmations 3 --block-time 1]
// npm run devnet -- deposit <userId|address> <amount> [USDC|USDT|DAI]
// npm run devnet -- mine [n]
// npm run devnet -- balance <address>
//
// A local EVM node (anvil) as test mode's chain: test USDC, USDT and DAI with their real decimals, the
// test treasury funded, the settings written to DATA_DIR/devnet.env for the server (docs/devnet.md).
import { parseArgs } from "node:util";
import { NETWORK_NAMES } from "../src/providers/chains.js";
import type { NetworkName } from "../src/chain/networks.js";
import { balance, deposit, mine } from "./devnet/commands.js";
import { start } from "./devnet/start.js";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    port: { type: "string", default: "8545" },
    network: { type: "string", default: "BASE" },
    "chain-id": { type: "string", default: "31337" },
    confirmations: { type: "string", default: "3" },
    "block-time": { type: "string", default: "1" },
  },
});

function wholeNumber(name: string, value: string, min: number, max: number): number {
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) throw new Error(`--${name}: must be a whole number from ${min} to ${max}`);
  return Number(value);
}

function startOptions() {
  const network = values.network.toUpperCase();
  if (!(NETWORK_NAMES as string[]).includes(network)) throw new Error(`--network: must be one of ${NETWORK_NAMES.join(", ")}`);
  return {
    port: wholeNumber("port", values.port, 1, 65535),
    chainId: wholeNumber("chain-id", values["chain-id"], 1, 2 ** 32),
    network: network as NetworkName,
    confirmations: wholeNumber("confirmations", values.confirmations, 1, 1000),
    blockTimeMs: wholeNumber("block-time", values["block-time"], 0, 3600) * 1000,
  };
}

async function main() {
  const [command, ...args] = positionals;
  switch (command) {
    case undefined:
      return start(startOptions());
    case "deposit":
      return deposit(args[0], args[1], args[2]);
    case "mine":
      return mine(args[0]);
    case "balance":
      return balance(args[0]);
    default:
      throw new Error(`unknown command ${command}: npm run devnet [-- deposit <userId|address> <amount> [token] | mine [n] | balance <address>]`);
  }
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
