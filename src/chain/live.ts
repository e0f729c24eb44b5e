import type { Address } from "viem";
import type { Mode } from "../clients/modes.js";
import { AppError } from "../errors.js";
import type { TokenSymbol } from "../providers/chains.js";
import { chainNetworks, networkLabel, type ChainSettings, type NetworkSettings, type WithdrawalRule } from "./networks.js";

/** A live-mode network and a test-mode network turned out to be one chain: neither may move money. */
export class ChainModesConflict extends Error {
  constructor(chainId: number, networks: NetworkSettings[]) {
    super(`chain id ${chainId} is configured for both modes (${networks.map(networkLabel).join(" and ")}): one chain cannot serve test and live mode`);
    this.name = "ChainModesConflict";
  }
}

/**
 * The networks of this deployment that are on a chain, for each client mode (live chains for live
 * mode, test chains for test mode), and the chain id each one's RPC reported (learnt in the
 * background by its watcher). What the rest of the product asks of the chain room without calling
 * the chain: is this network on a chain in this mode, what is its chain id, which contract is this token.
 */
export class LiveNetworks {
  private readonly chainIds = new Map<NetworkSettings, number>();
  readonly onChain: NetworkSettings[];

  constructor(readonly settings: ChainSettings) {
    this.onChain = chainNetworks(settings);
  }

  /** Records the chain id a network's RPC reported; refuses one that a network of the other mode already reported. */
  learnt(network: NetworkSettings, chainId: number) {
    const other = this.onChain.find((candidate) => candidate.livemode !== network.livemode && this.chainIds.get(candidate) === chainId);
    if (other) throw new ChainModesConflict(chainId, [other, network]);
    this.chainIds.set(network, chainId);
  }

  /** The network of §4's list named `name`, as this deployment runs it in `mode`. */
  settingsOf(mode: Mode, name: string): NetworkSettings | undefined {
    return this.settings.networks.find((network) => network.name === name && network.livemode === (mode === "live"));
  }

  private onChainOf(mode: Mode, name: string): NetworkSettings | undefined {
    const network = this.settingsOf(mode, name);
    return network && network.mode !== "sandbox" ? network : undefined;
  }

  /** The on-chain network of `mode` a chain id designates (§4's id, or the id its RPC reported); undefined when none. */
  networkFor(mode: Mode, chainId: number): string | undefined {
    return this.onChain.find((network) => network.livemode === (mode === "live") && (network.listedChainId === chainId || this.chainIds.get(network) === chainId))?.name;
  }

  /** A network's chain id in `mode`: an on-chain one's is its RPC's (undefined until it has answered), a simulated one's §4's. */
  chainIdOf(mode: Mode, name: string): number | undefined {
    const onChain = this.onChainOf(mode, name);
    if (onChain) return this.chainIds.get(onChain);
    return this.settingsOf(mode, name)?.listedChainId;
  }

  /** Whether money on `name` moves on a chain in `mode` (live mode: a live chain; test mode: a test chain). */
  isOnChain(mode: Mode, name: string): boolean {
    return this.onChainOf(mode, name) !== undefined;
  }

  /**
   * What SPEC §15 asks before any money moves towards `network` in `mode`: live mode has no
   * simulation, so the network must be on a live chain and configure `symbol`; a test-mode network on
   * a test chain must configure it too. 400 naming `field`, before anything is debited or created.
   */
  assertUsable(mode: Mode, network: string, symbol: string, field: string): void {
    if (!this.isOnChain(mode, network)) {
      if (mode === "live") throw new AppError("BAD_USER_INPUT", `${field}: ${network} is not live on this server (no CHAIN_RPC_URL_${network}): live mode moves money on live networks only`, { param: field });
      return;
    }
    if (!this.tokenOf(mode, network, symbol)) throw new AppError("BAD_USER_INPUT", `${field}: ${symbol} has no contract configured on ${network} in ${mode} mode`, { param: field });
  }

  /**
   * A withdrawal's minimum and network fee on `name` in `mode` when it goes out on a chain; undefined
   * on a simulated network (test mode's sandbox spends no gas: no minimum beyond the currency's, no fee).
   */
  withdrawalRule(mode: Mode, name: string, symbol: TokenSymbol | string): WithdrawalRule | undefined {
    return this.onChainOf(mode, name)?.withdrawals[symbol as TokenSymbol];
  }

  /** The contract of `symbol` on an on-chain network of `mode`; undefined when the network is simulated or lists no such token. */
  tokenOf(mode: Mode, name: string, symbol: TokenSymbol | string): Address | undefined {
    return this.onChainOf(mode, name)?.tokens[symbol as TokenSymbol];
  }
}
