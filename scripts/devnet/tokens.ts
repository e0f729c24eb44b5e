import { erc20Abi, parseEther, parseUnits, type Address } from "viem";
import type { TokenSymbol } from "../../src/providers/chains.js";
import type { NodeConnection } from "./node.js";
import { callToken, deployTokenContract } from "./token.js";

/** The devnet's tokens, with their real decimals. */
export const DEVNET_TOKENS: { symbol: TokenSymbol; name: string; decimals: number }[] = [
  { symbol: "USDC", name: "USD Coin (devnet)", decimals: 6 },
  { symbol: "USDT", name: "Tether USD (devnet)", decimals: 6 },
  { symbol: "DAI", name: "Dai Stablecoin (devnet)", decimals: 18 },
];

export const decimalsOf = (symbol: TokenSymbol) => DEVNET_TOKENS.find((token) => token.symbol === symbol)!.decimals;

/**
 * Each token's contract: the one the last run deployed when the chain still holds it (a restart on
 * the saved chain), else a new one from `owner` (anvil's first account, who alone mints).
 */
export async function ensureTokens(node: NodeConnection, owner: Address, previous: Partial<Record<TokenSymbol, Address>>): Promise<Record<TokenSymbol, Address>> {
  const tokens: Partial<Record<TokenSymbol, Address>> = {};
  for (const token of DEVNET_TOKENS) {
    const known = previous[token.symbol];
    tokens[token.symbol] = known && (await isToken(node, known, token)) ? known : await deployTokenContract(node.client, owner, token);
  }
  return tokens as Record<TokenSymbol, Address>;
}

async function isToken(node: NodeConnection, address: Address, token: { symbol: string; decimals: number }): Promise<boolean> {
  try {
    const [symbol, decimals] = await Promise.all([
      node.client.readContract({ address, abi: erc20Abi, functionName: "symbol" }),
      node.client.readContract({ address, abi: erc20Abi, functionName: "decimals" }),
    ]);
    return symbol === token.symbol && decimals === token.decimals;
  } catch {
    return false;
  }
}

/** Tops `address` up to `ether` of the native coin (anvil_setBalance) and `perToken` whole units of each token (minted). */
export async function fund(node: NodeConnection, owner: Address, tokens: Record<TokenSymbol, Address>, address: Address, amounts: { ether: string; perToken: string }) {
  const wei = parseEther(amounts.ether);
  if ((await node.client.getBalance({ address })) < wei) await node.test.setBalance({ address, value: wei });
  for (const token of DEVNET_TOKENS) await topUp(node, owner, tokens[token.symbol], address, parseUnits(amounts.perToken, token.decimals));
}

/** Mints what `address` lacks of `units` base units of the token. */
export async function topUp(node: NodeConnection, owner: Address, token: Address, address: Address, units: bigint) {
  const balance = await node.client.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [address] });
  if (balance < units) await callToken(node.client, owner, token, "mint", [address, units - balance]);
}
