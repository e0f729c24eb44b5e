import type { Address } from "viem";
import type { Mode } from "../modes.js";
import { AppError } from "../errors.js";
import type { TokenSymbol } from "../providers/chains.js";
import { chainNetworks, networkLabel, type ChainSettings, type NetworkSettings, type WithdrawalRule } from "./networks.js";
import type { TokenAvailability } from "./tokens.js";

/** A token of a network on a chain whose RPC has not answered the check yet. */
const UNCHECKED: TokenAvailability = { available: false, reason: "not checked yet: the network's RPC has not answered; retry shortly" };
/** A simulated network's tokens: the sandbox plays them. */
const SIMULATED: TokenAvailability = { available: true, reason: null };

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
  private readonly tokenChecks = new Map<NetworkSettings, Map<TokenSymbol, TokenAvailability>>();
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

  /** Records what the latest check of a network's token found (its watcher checks each token on its own). */
  tokenChecked(network: NetworkSettings, symbol: TokenSymbol, availability: TokenAvailability) {
    const checks = this.tokenChecks.get(network) ?? new Map<TokenSymbol, TokenAvailability>();
    checks.set(symbol, availability);
    this.tokenChecks.set(network, checks);
  }

  /** Whether a token the network configures works there: on a chain, as its latest check found; simulated, always. */
  tokenAvailability(network: NetworkSettings, symbol: TokenSymbol): TokenAvailability {
    if (network.mode === "sandbox") return SIMULATED;
    return this.tokenChecks.get(network)?.get(symbol) ?? UNCHECKED;
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
   * simulation, so the network must be on a live chain and configure `symbol`, whose contract must
   * work there (available: code at its address, a decimals() that answers); a test-mode network on a
   * test chain likewise. 400 naming `field` (a network that cannot be used) or `tokenField` (a token
   * it cannot move), before anything is debited or created.
   */
  assertUsable(mode: Mode, network: string, symbol: string, field: string, tokenField = field): void {
    const refuse = (param: string, message: string) => new AppError("BAD_USER_INPUT", `${param}: ${message}`, { param });
    const onChain = this.onChainOf(mode, network);
    if (!onChain) {
      if (mode === "live") throw refuse(field, `${network} is not live on this server (no CHAIN_RPC_URL_${network}): live mode moves money on live networks only`);
      return;
    }
    if (!this.tokenOf(mode, network, symbol)) throw refuse(tokenField, `${symbol} has no contract configured on ${network} in ${mode} mode`);
    const availability = this.tokenAvailability(onChain, symbol as TokenSymbol);
    if (!availability.available) throw refuse(tokenField, `${symbol} is unavailable on ${network} in ${mode} mode (${availability.reason})`);
  }

  /**
   * Where an account of `symbol` on `name` receives in `mode`: an on-chain network's chain id as its
   * RPC reported it and its configured contract; a simulated one's §4's id and its listed contract
   * (undefined for what the network does not list). 400 naming `field` while an on-chain network's
   * RPC has not answered.
   */
  receivingOn(mode: Mode, name: string, symbol: TokenSymbol, field: string): { chainId: number; tokenAddress: Address } | undefined {
    const network = this.settingsOf(mode, name);
    const tokenAddress = network?.tokens[symbol];
    if (!network || !tokenAddress) return undefined;
    const chainId = this.chainIdOf(mode, name);
    if (chainId === undefined) throw new AppError("BAD_USER_INPUT", `${field}: ${name} is on a chain and its RPC has not reported its chain id yet; retry shortly`, { param: field });
    return { chainId, tokenAddress };
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
