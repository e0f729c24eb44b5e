import { describe, it, expect } from "vitest";
import { isAddress } from "viem";
import { NETWORKS, networkByChainId, networkByName } from "../../src/providers/chains.js";

describe("chains", () => {
  it("lists the five networks with their chain ids", () => {
    expect(NETWORKS.map((n) => [n.name, n.chainId])).toEqual([
      ["ETHEREUM", 1],
      ["POLYGON", 137],
      ["BASE", 8453],
      ["ARBITRUM", 42161],
      ["OPTIMISM", 10],
    ]);
  });

  it("has only EIP-55 checksummed token addresses", () => {
    for (const network of NETWORKS) {
      for (const address of Object.values(network.tokens)) {
        expect(isAddress(address, { strict: true }), `${network.name} ${address}`).toBe(true);
      }
    }
  });

  it("looks networks up by name case-insensitively and by chain id", () => {
    expect(networkByName("base")?.chainId).toBe(8453);
    expect(networkByName("Polygon")?.tokens.USDC).toBe("0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359");
    expect(networkByName("solana")).toBeUndefined();
    expect(networkByChainId(42161)?.name).toBe("ARBITRUM");
    expect(networkByChainId(5)).toBeUndefined();
  });
});
