import type { Address } from "viem";

export type TokenSymbol = "USDC" | "USDT" | "DAI";

/** Supported EVM networks with the real (native, Circle-issued) USDC contract of each. */
export const NETWORKS = [
  {
    name: "ETHEREUM",
    chainId: 1,
    tokens: {
      USDC: "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
      USDT: "0xdAC17F958D2ee523a2206206994597C13D831ec7",
      DAI: "0x6B175474E89094C44Da98b954EedeAC495271d0F",
    },
  },
  { name: "POLYGON", chainId: 137, tokens: { USDC: "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359" } },
  { name: "BASE", chainId: 8453, tokens: { USDC: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" } },
  { name: "ARBITRUM", chainId: 42161, tokens: { USDC: "0xaf88d065e77c8cC2239327C5EDb3A432268e5831" } },
  { name: "OPTIMISM", chainId: 10, tokens: { USDC: "0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85" } },
] as const satisfies readonly {
  name: string;
  chainId: number;
  tokens: { USDC: Address } & Partial<Record<TokenSymbol, Address>>;
}[];

export type Network = (typeof NETWORKS)[number];
export const NETWORK_NAMES = NETWORKS.map((network) => network.name);

export function networkByName(name: string): Network | undefined {
  const upper = name.toUpperCase();
  return NETWORKS.find((n) => n.name === upper);
}

export function networkByChainId(chainId: number): Network | undefined {
  return NETWORKS.find((n) => n.chainId === chainId);
}
