import type { Address } from "viem";
import type { TokenSymbol } from "../providers/chains.js";
import type { ChainSettings, NetworkSettings } from "./networks.js";

/**
 * The live networks of this deployment and the chain id each one's RPC reported (learnt in the
 * background by its watcher). What the rest of the product asks of the chain room without calling
 * the chain: is this network live, what is its chain id, which contract is this token there.
 */
export class LiveNetworks {
  private readonly chainIds = new Map<string, number>();
  readonly live: NetworkSettings[];

  constructor(readonly settings: ChainSettings) {
    this.live = settings.networks.filter((network) => network.mode === "live");
  }

  learnt(network: string, chainId: number) {
    this.chainIds.set(network, chainId);
  }

  /** The live network a chain id designates (§4's id of a live network, or the id its RPC reported); undefined when sandbox. */
  liveNetworkFor(chainId: number): string | undefined {
    return this.live.find((network) => network.listedChainId === chainId || this.chainIds.get(network.name) === chainId)?.name;
  }

  /** A network's chain id as this deployment runs it: a live one's is its RPC's (undefined until it has answered), a sandbox one's §4's. */
  chainIdOf(name: string): number | undefined {
    if (this.isLive(name)) return this.chainIds.get(name);
    return this.settings.networks.find((network) => network.name === name)?.listedChainId;
  }

  isLive(name: string): boolean {
    return this.live.some((network) => network.name === name);
  }

  /** The contract of `symbol` on a live network; undefined when the network is not live or lists no such token. */
  tokenOf(name: string, symbol: TokenSymbol | string): Address | undefined {
    return this.live.find((network) => network.name === name)?.tokens[symbol as TokenSymbol];
  }
}
