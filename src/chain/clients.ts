import { createPublicClient, http, type PublicClient } from "viem";
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
