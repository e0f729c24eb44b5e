import { createPublicClient, erc20Abi, http, type Address, type PublicClient } from "viem";
import type { ChainSettings, NetworkSettings } from "./networks.js";

/**
 * The one way the product talks JSON-RPC: a viem public client per live network. Every call has a
 * time-out (CHAIN_RPC_TIMEOUT_MS) and one retry, so an RPC that hangs costs a bounded wait and never
 * a request: nothing on a request's path calls the chain. Calls made in the same tick go as one
 * JSON-RPC batch (the watcher's block headers).
 */
export function chainClient(network: NetworkSettings, settings: Pick<ChainSettings, "rpcTimeoutMs">): PublicClient {
  if (!network.rpcUrl) throw new Error(`${network.name} is not live: it has no CHAIN_RPC_URL_${network.name}`);
  return createPublicClient({
    transport: http(network.rpcUrl, { timeout: settings.rpcTimeoutMs, retryCount: 1, retryDelay: 250, batch: { batchSize: 200, wait: 0 } }),
  });
}

/** Each token's decimals, read from its contract once per process (a contract's decimals never change); a failed read is tried again. */
export function tokenDecimals(client: PublicClient): (token: Address) => Promise<number> {
  const known = new Map<Address, Promise<number>>();
  return (token) => {
    let decimals = known.get(token);
    if (!decimals) {
      decimals = client.readContract({ address: token, abi: erc20Abi, functionName: "decimals" });
      known.set(token, decimals);
      decimals.catch(() => known.delete(token));
    }
    return decimals;
  };
}
