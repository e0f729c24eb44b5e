import { builder } from "../graphql/builder.js";
import type { Network } from "../providers/chains.js";
import { NETWORK_NAMES } from "../providers/chains.js";
import { DEPOSIT_TOKENS } from "../deposits/tokens.js";
import { NetworkEnum } from "../wallets/network-schema.js";
import type { NetworkView } from "./rail.js";

const NetworkModeEnum = builder.enumType("NetworkMode", {
  description:
    "How the network runs in the caller's mode. live: on a live chain (CHAIN_RPC_URL_<NETWORK>; live mode); test: on a test chain " +
    "(CHAIN_TEST_RPC_URL_<NETWORK>; test mode); sandbox: the sandbox plays the chain (test mode only: live mode cannot use such a network).",
  values: ["live", "test", "sandbox"] as const,
});

const NetworkToken = builder.objectRef<NetworkView["tokens"][number]>("NetworkToken").implement({
  description: "A token the network takes deposits in, its contract there, and whether that contract works on the chain.",
  fields: (t) => ({
    symbol: t.exposeString("symbol"),
    address: t.exposeString("address", { description: "EIP-55 contract address" }),
    available: t.exposeBoolean("available", {
      description:
        "On a chain: whether the contract works there (code at its address, decimals() answers), checked by the watcher; an unavailable token's deposits " +
        "are not watched and new accounts and withdrawals in it are refused. Always true on a sandbox network",
    }),
    reason: t.exposeString("reason", { nullable: true, description: "Why the token is unavailable (e.g. no contract code at its address); null when available" }),
  }),
});

const ChainNetwork = builder.objectRef<NetworkView>("ChainNetwork").implement({
  description: "One EVM network as this deployment runs it (SPEC §14).",
  fields: (t) => ({
    network: t.field({ type: NetworkEnum, resolve: (view) => view.network as Network["name"] }),
    chainId: t.exposeInt("chainId", { nullable: true, description: "A live network's is the one its RPC reports (null until the RPC has answered)" }),
    mode: t.field({ type: NetworkModeEnum, resolve: (view) => view.mode }),
    confirmations: t.exposeInt("confirmations", { description: "How deep a block must be (head − block + 1) before a deposit in it completes" }),
    tokens: t.field({ type: [NetworkToken], extensions: { maxListSize: DEPOSIT_TOKENS.length }, resolve: (view) => view.tokens }),
    headBlock: t.exposeInt("headBlock", { nullable: true, description: "On a chain: the newest head the watcher read; null when sandbox" }),
    syncedBlock: t.exposeInt("syncedBlock", { nullable: true, description: "On a chain: the last block the watcher finished; null when sandbox" }),
    livemode: t.boolean({ description: "The mode these settings are for: the caller's", resolve: (view) => view.livemode }),
  }),
});

builder.queryFields((t) => ({
  networks: t.field({
    permission: "authenticated",
    type: [ChainNetwork],
    description: "The EVM networks as they run in the caller's mode: on a chain (live or test) or sandbox, with their tokens, depth and progress.",
    extensions: { maxListSize: NETWORK_NAMES.length },
    resolve: async (_root, _args, ctx) => ctx.services.chain.networks((await ctx.client()).mode),
  }),
}));
