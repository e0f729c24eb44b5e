import { z } from "zod";
import { graphql } from "../../graphql/typed.js";
import { NETWORK_NAMES } from "../../providers/chains.js";
import { named } from "../docs.js";
import { route } from "../route.js";

const NetworkBody = named("Network", z.object({
  network: z.enum(NETWORK_NAMES),
  chainId: z.int().nullable().describe("a live network's is the one its RPC reports (null until it has answered)"),
  mode: z.enum(["live", "sandbox"]).describe("live: deposits come from the chain; sandbox: the sandbox plays it"),
  confirmations: z.int().describe("how deep a block must be (head − block + 1) before a deposit in it completes"),
  tokens: z.record(z.string(), z.string()).describe("token symbol → contract address"),
  tokenAvailability: z
    .record(z.string(), z.object({ available: z.boolean(), reason: z.string().nullable() }))
    .describe("token symbol → whether its contract works on the chain (code at its address, decimals() answers) and, when not, why; always available on a sandbox network"),
  headBlock: z.int().nullable().describe("live: the newest head the watcher read; null when sandbox"),
  syncedBlock: z.int().nullable().describe("live: the last block the watcher finished; null when sandbox"),
}));

export const networkRoutes = [
  route({
    method: "GET",
    path: "/v1/networks",
    operation: graphql(`query ListNetworks { networks { network chainId mode confirmations tokens { symbol address available reason } headBlock syncedBlock } }`),
    result: (data) =>
      data.networks.map(({ tokens, ...network }) => ({
        ...network,
        tokens: Object.fromEntries(tokens.map((token) => [token.symbol, token.address])),
        tokenAvailability: Object.fromEntries(tokens.map(({ symbol, available, reason }) => [symbol, { available, reason: reason ?? null }])),
      })),
    docs: {
      summary: "The EVM networks, live or sandbox",
      description:
        "Every network of the supported list as this deployment runs it: live (an RPC is configured; deposits come from the chain and complete at `confirmations` depth) or sandbox. headBlock − syncedBlock is how far the live watcher lags.",
      response: z.array(NetworkBody),
      example: {
        response: [
          {
            network: "ETHEREUM",
            chainId: 1,
            mode: "live",
            confirmations: 12,
            tokens: { USDC: "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", USDT: "0xdAC17F958D2ee523a2206206994597C13D831ec7" },
            tokenAvailability: { USDC: { available: true, reason: null }, USDT: { available: false, reason: "no contract code at 0xdAC17F958D2ee523a2206206994597C13D831ec7" } },
            headBlock: 21000012,
            syncedBlock: 21000012,
          },
          {
            network: "POLYGON",
            chainId: 137,
            mode: "sandbox",
            confirmations: 256,
            tokens: { USDC: "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359" },
            tokenAvailability: { USDC: { available: true, reason: null } },
            headBlock: null,
            syncedBlock: null,
          },
        ],
      },
    },
  }),
];
