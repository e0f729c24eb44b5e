import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import { erc20Abi, formatEther, formatUnits, type Address, type PublicClient } from "viem";
import type { Sql, SqlDatabase } from "../db/sql.js";
import type { DepositService } from "../deposits/service.js";
import type { PrismaClient } from "../generated/prisma/client.js";
import type { Logger } from "../logger.js";
import { chainClient, tokenDecimals } from "../chain/clients.js";
import type { LiveNetworks } from "../chain/live.js";
import type { ChainMetrics } from "../metrics/chain.js";
import { networkLabel, type NetworkMode, type NetworkSettings } from "../chain/networks.js";
import type { Mode } from "../modes.js";
import { Reconciler } from "../chain/reconciler.js";
import type { ReconciledNetwork } from "../chain/reconciliation.js";
import { cursorsOf } from "../chain/records.js";
import { sendBacklog, type SendPurpose } from "../chain/send-records.js";
import { NetworkSender, type SendOutcome, type SendOutcomes } from "../chain/sender.js";
import { Sweeps, sweepOutcome } from "../chain/sweeps.js";
import type { Signers } from "../providers/treasury.js";
import type { TokenAvailability } from "../chain/tokens.js";
import { NetworkWatcher } from "./watcher.js";
import type { TokenSymbol } from "../providers/chains.js";

/** A network as `GET /v1/networks` and GraphQL `networks` show it (SPEC §14). */
export type NetworkView = {
  network: string;
  /** A live network's is the one its RPC reported (null until it has answered); a sandbox network's is §4's. */
  chainId: number | null;
  mode: NetworkMode;
  confirmations: number;
  /** Each token configured, and whether it works on the chain (a simulated network's always do). */
  tokens: ({ symbol: string; address: string } & TokenAvailability)[];
  /** Live only: the newest head the watcher read, and the last block it finished. */
  headBlock: number | null;
  syncedBlock: number | null;
  livemode: boolean;
};

/** A chain client whose chain id, whenever it is read, is first checked against the other mode's chains. */
function modesApart(client: PublicClient, learnt: (chainId: number) => void): PublicClient {
  return client.extend(() => ({
    getChainId: async () => {
      const chainId = await client.getChainId();
      learnt(chainId);
      return chainId;
    },
  })) as PublicClient;
}

/** The watcher's database, each round trip counted (what a block costs the database, in the metrics). */
function counted(sql: SqlDatabase, count: (calls?: number) => void): SqlDatabase {
  const countedSql = (inner: Sql): Sql => ({
    query: (name, text, values) => {
      count();
      return inner.query(name, text, values);
    },
  });
  return {
    ...countedSql(sql),
    transaction: (work) => {
      count(2);
      return sql.transaction((tx) => work(countedSql(tx)));
    },
  };
}

type Live = { settings: NetworkSettings; watcher: NetworkWatcher; sender: NetworkSender };

type RailDeps = {
  networks: LiveNetworks;
  prisma: PrismaClient;
  sql: SqlDatabase;
  deposits: DepositService;
  signers: Signers;
  metrics: ChainMetrics;
  logger: Logger;
};

/**
 * The live networks of this deployment: their watchers (deposits in) and senders (withdrawals,
 * forwards, sweeps out), each working where it holds its chain's lease (every instance learns its
 * networks' chain ids in the background), and what the API tells of them. Nothing here calls the
 * chain on a request's path.
 */
export class ChainRail {
  private readonly live: Live[];
  private readonly outcomes: SendOutcomes = { SWEEP: sweepOutcome };

  constructor(private readonly deps: RailDeps) {
    const holder = `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
    const { settings } = deps.networks;
    const reconciled: Record<Mode, ReconciledNetwork[]> = { live: [], test: [] };
    const reconcilers: Record<Mode, Reconciler> = {
      live: new Reconciler({ sql: deps.sql, mode: "live", networks: reconciled.live, intervalMs: settings.reconcileIntervalMs, metrics: deps.metrics, logger: deps.logger }),
      test: new Reconciler({ sql: deps.sql, mode: "test", networks: reconciled.test, intervalMs: settings.reconcileIntervalMs, metrics: deps.metrics, logger: deps.logger }),
    };
    this.live = deps.networks.onChain.map((network) => {
      const mode: Mode = network.livemode ? "live" : "test";
      // Whoever asks the chain its id first (the watcher or the sender) records it, and a chain id that
      // the other mode's network already reported stops this network: one chain never serves both modes.
      const client = modesApart(chainClient(network, settings), (chainId) => deps.networks.learnt(network, chainId));
      const watcher = new NetworkWatcher({
        network,
        client,
        settings,
        sql: counted(deps.sql, (calls = 1) => deps.metrics.databaseCalls.inc({ network: networkLabel(network) }, calls)),
        deposits: deps.deposits,
        metrics: deps.metrics,
        logger: deps.logger,
        holder,
        onChainId: (chainId) => deps.networks.learnt(network, chainId),
        onTokenChecked: (token, availability) => {
          deps.networks.tokenChecked(network, token, availability);
          deps.metrics.tokenAvailable.set({ network: network.name, token, mode }, availability.available ? 1 : 0);
        },
      });
      const decimalsOf = tokenDecimals(client);
      // A mode's books are reconciled by the sender of its first network on a chain (its lease holder: once across instances).
      const reconciles = reconciled[mode].length === 0;
      reconciled[mode].push({ settings: network, client, treasury: deps.signers.treasury[mode].address, decimalsOf });
      const sweeps = new Sweeps({
        network,
        client,
        sql: deps.sql,
        treasury: deps.signers.treasury[mode].address,
        sweepMin: settings.sweepMin,
        logger: deps.logger.child({ network: network.name }),
        decimalsOf,
      });
      const sender = new NetworkSender({
        network,
        client,
        settings,
        prisma: deps.prisma,
        sql: deps.sql,
        decimalsOf,
        signerFor: (sql, address) => deps.signers.signerFor(sql, address),
        outcomes: this.outcomes,
        // Neither a sweep nor a gauge may hold up a withdrawal: their failures are logged, and the pass goes on.
        beforeSigning: async (chainId) => {
          const log = deps.logger.child({ network: network.name });
          await sweeps.plan(chainId).catch((err: Error) => log.warn({ err: err.message }, "sweep planning failed; retrying on the next pass"));
          await this.report(network, client, decimalsOf, chainId).catch((err: Error) => log.debug({ err: err.message }, "chain gauges not updated"));
          if (reconciles) await reconcilers[mode].maybeRun();
        },
        needsGas: (tx, send, wei) => sweeps.fundGas(tx, send, wei),
        metrics: deps.metrics,
        logger: deps.logger,
        holder,
      });
      return { settings: network, watcher, sender };
    });
  }

  /** Who is told of each step of a send of this purpose (the withdrawal and deposit rooms register theirs). */
  handle(purpose: SendPurpose, outcome: SendOutcome) {
    this.outcomes[purpose] = outcome;
  }

  start() {
    for (const network of this.live) {
      network.watcher.start();
      network.sender.start();
    }
  }

  async stop() {
    await Promise.all(this.live.flatMap((network) => [network.watcher.stop(), network.sender.stop()]));
  }

  /** A send was queued on this instance: its network's sender looks now. */
  nudge() {
    for (const network of this.live) network.sender.nudge();
  }

  /** The on-chain network of `mode` a chain id designates (§4's id, or the id its RPC reported); undefined when none. */
  networkFor(mode: Mode, chainId: number): string | undefined {
    return this.deps.networks.networkFor(mode, chainId);
  }

  /** A network's chain id in `mode`: an on-chain one's is its RPC's (undefined until it has answered), a simulated one's §4's. */
  chainIdOf(mode: Mode, name: string): number | undefined {
    return this.deps.networks.chainIdOf(mode, name);
  }

  /**
   * At start: every on-chain network's RPC that answers within its time-out is asked its chain id, and
   * a chain configured for both modes refuses the start (one answering later is refused by its network then).
   */
  async assertModesApart(): Promise<void> {
    const { networks } = this.deps;
    const { settings } = networks;
    const answers = await Promise.all(networks.onChain.map((network) => chainClient(network, settings).getChainId().then((chainId) => ({ network, chainId }), () => undefined)));
    for (const answer of answers) if (answer) networks.learnt(answer.network, answer.chainId);
  }

  /**
   * At start, after the chain ids: the tokens of every on-chain network whose RPC answered are checked,
   * so that the first requests find them checked (a failure leaves them to the watcher's passes).
   */
  async checkTokens(): Promise<void> {
    const answered = this.live.filter((network) => this.deps.networks.chainIdOf(network.settings.livemode ? "live" : "test", network.settings.name) !== undefined);
    await Promise.all(answered.map((network) => network.watcher.checkTokens().catch(() => undefined)));
  }

  /** The operator's gauges, set by the sender's holder each pass: the backlog of sends, unswept deposits, the treasury's balances. */
  private async report(network: NetworkSettings, client: ReturnType<typeof chainClient>, decimalsOf: (token: Address) => Promise<number>, chainId: number) {
    const { metrics, signers } = this.deps;
    const labels = { network: networkLabel(network) };
    const treasury = signers.treasury[network.livemode ? "live" : "test"].address;
    const [[backlog], native, tokens] = await Promise.all([
      sendBacklog(this.deps.sql, [chainId]),
      client.getBalance({ address: treasury }),
      Promise.all(
        this.availableTokens(network).map(async ([symbol, address]) => {
          const [balance, decimals] = await Promise.all([
            client.readContract({ address: address as Address, abi: erc20Abi, functionName: "balanceOf", args: [treasury] }),
            decimalsOf(address as Address),
          ]);
          return { symbol, balance: Number(formatUnits(balance, decimals)) };
        }),
      ),
    ]);
    metrics.sendsPending.set(labels, backlog.pending);
    metrics.oldestPendingSeconds.set(labels, backlog.oldestCreatedAt ? (Date.now() - new Date(backlog.oldestCreatedAt).getTime()) / 1000 : 0);
    metrics.unsweptDeposits.set(labels, backlog.unsweptDeposits);
    metrics.reorgedSends.set(labels, backlog.reorgedSends);
    metrics.orphanedSends.set(labels, backlog.orphanedSends);
    metrics.treasuryNative.set(labels, Number(formatEther(native)));
    for (const token of tokens) metrics.treasuryToken.set({ ...labels, token: token.symbol }, token.balance);
  }

  /** The tokens of a network that work on its chain (the others are unavailable: nothing to read of them). */
  private availableTokens(network: NetworkSettings) {
    return Object.entries(network.tokens).filter(([symbol]) => this.deps.networks.tokenAvailability(network, symbol as TokenSymbol).available);
  }

  /** Every network of §4's list, in its order, as this deployment runs it in `mode`. */
  async networks(mode: Mode): Promise<NetworkView[]> {
    const ofMode = this.deps.networks.settings.networks.filter((network) => network.livemode === (mode === "live"));
    const chainIds = ofMode.flatMap((network) => {
      const chainId = network.mode === "sandbox" ? undefined : this.chainIdOf(mode, network.name);
      return chainId === undefined ? [] : [chainId];
    });
    const cursors = new Map((await cursorsOf(this.deps.sql, chainIds)).map((cursor) => [cursor.chainId, cursor]));
    return ofMode.map((settings) => {
      const live = settings.mode !== "sandbox";
      const chainId = this.chainIdOf(mode, settings.name);
      const cursor = live && chainId !== undefined ? cursors.get(chainId) : undefined;
      return {
        network: settings.name,
        chainId: chainId ?? null,
        mode: settings.mode,
        confirmations: settings.confirmations,
        tokens: Object.entries(settings.tokens).map(([symbol, address]) => ({ symbol, address, ...this.deps.networks.tokenAvailability(settings, symbol as TokenSymbol) })),
        headBlock: cursor ? Number(cursor.headBlock) : null,
        syncedBlock: cursor ? Number(cursor.blockNumber) : null,
        livemode: settings.livemode,
      };
    });
  }
}
