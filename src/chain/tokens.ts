import { BaseError, erc20Abi, HttpRequestError, TimeoutError, type Address, type PublicClient } from "viem";
import type { Logger } from "../logger.js";
import type { TokenSymbol } from "../providers/chains.js";
import type { NetworkSettings } from "./networks.js";

/** Whether a configured token works on its chain, and why not. */
export type TokenAvailability = { available: true; reason: null } | { available: false; reason: string };

/** What a token's check found: its decimals when it works. */
export type TokenCheck = { available: true; decimals: number } | { available: false; reason: string };

/** The RPC itself failed (unreachable, timed out): the network is down, which says nothing of the token. */
const unreachable = (err: unknown) => err instanceof BaseError && err.walk((cause) => cause instanceof HttpRequestError || cause instanceof TimeoutError) !== null;

/**
 * One token on its chain: code at its address, and a decimals() that answers. A token that fails
 * either is unavailable, with the reason; an RPC that fails throws (the check is worth nothing then).
 */
export async function checkToken(client: PublicClient, address: Address): Promise<TokenCheck> {
  const [code, decimals] = await Promise.all([
    client.getCode({ address }),
    client.readContract({ address, abi: erc20Abi, functionName: "decimals" }).then(
      (value) => ({ value }),
      (err: unknown) => {
        if (unreachable(err)) throw err;
        return { err: err instanceof BaseError ? err.shortMessage : String(err) };
      },
    ),
  ]);
  if (!code || code === "0x") return { available: false, reason: `no contract code at ${address}` };
  if ("err" in decimals) return { available: false, reason: `decimals() failed: ${decimals.err}` };
  return { available: true, decimals: decimals.value };
}

type NetworkTokensDeps = {
  network: NetworkSettings;
  client: PublicClient;
  log: Logger;
  /** Every check's outcome, for what the API answers and the gauge. */
  checked(symbol: TokenSymbol, availability: TokenAvailability): void;
};

/**
 * The tokens of one network on its chain, each checked on its own: one that fails is unavailable
 * (its reason logged once, re-checked every pass) while the others are watched. A token that worked
 * once keeps its decimals for the process (a contract's decimals never change).
 */
export class NetworkTokens {
  private readonly all: { symbol: TokenSymbol; address: Address }[];
  private readonly decimals = new Map<Address, number>();
  private readonly reasons = new Map<TokenSymbol, string>();

  constructor(private readonly deps: NetworkTokensDeps) {
    this.all = Object.entries(deps.network.tokens).map(([symbol, address]) => ({ symbol: symbol as TokenSymbol, address: address as Address }));
  }

  /** Checks every token not yet found available; throws when the RPC fails. */
  async check(): Promise<void> {
    const pending = this.all.filter((token) => !this.decimals.has(token.address));
    const checks = await Promise.all(pending.map((token) => checkToken(this.deps.client, token.address)));
    pending.forEach((token, i) => {
      const check = checks[i];
      if (check.available) {
        this.decimals.set(token.address, check.decimals);
        if (this.reasons.delete(token.symbol)) this.deps.log.info({ token: token.symbol, address: token.address }, "token available again");
        this.deps.checked(token.symbol, { available: true, reason: null });
        return;
      }
      if (this.reasons.get(token.symbol) !== check.reason) {
        this.deps.log.warn({ token: token.symbol, address: token.address, reason: check.reason }, "token unavailable: its deposits are not watched and it is refused for new accounts and withdrawals; re-checked every pass");
      }
      this.reasons.set(token.symbol, check.reason);
      this.deps.checked(token.symbol, { available: false, reason: check.reason });
    });
  }

  /** The tokens found available: the ones whose logs are read. */
  get available(): { symbol: TokenSymbol; address: Address }[] {
    return this.all.filter((token) => this.decimals.has(token.address));
  }

  /** Whether every token was found available (nothing is left to check). */
  get allAvailable(): boolean {
    return this.available.length === this.all.length;
  }

  /** The decimals of an available token. */
  decimalsOf(address: Address): number {
    const decimals = this.decimals.get(address);
    if (decimals === undefined) throw new Error(`token ${address} is not available`);
    return decimals;
  }
}
