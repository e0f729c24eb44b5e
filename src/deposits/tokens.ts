import { badInput } from "../errors.js";
import { networkByChainId, type TokenSymbol } from "../providers/chains.js";

export const DEPOSIT_TOKENS = ["USDC", "USDT", "DAI"] as const satisfies readonly TokenSymbol[];

export function isDepositToken(currency: string): currency is TokenSymbol {
  return (DEPOSIT_TOKENS as readonly string[]).includes(currency);
}

/** The real contract of a token on a supported chain; a 400 for an unknown chain or a token not issued there. */
export function tokenContract(token: TokenSymbol, chainId: number): string {
  const network = networkByChainId(chainId);
  if (!network) throw badInput(`chainId: ${chainId} is not a supported chain`);
  const address = (network.tokens as Partial<Record<TokenSymbol, string>>)[token];
  if (!address) throw badInput(`chainId: ${token} is not supported on ${network.name} (${chainId})`);
  return address;
}
