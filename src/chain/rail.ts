import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import type { Sql, SqlDatabase } from "../db/sql.js";
import type { DepositService } from "../deposits/service.js";
import type { Logger } from "../logger.js";
import { chainClient } from "./clients.js";
import type { ChainMetrics } from "./metrics.js";
import type { ChainSettings, NetworkMode, NetworkSettings } from "./networks.js";
import { cursorsOf } from "./records.js";
import { NetworkWatcher } from "./watcher.js";

/** A network as `GET /v1/networks` and GraphQL `networks` show it (SPEC §14). */
export type NetworkView = {
  network: string;
  /** A live network's is the one its RPC reported (null until it has answered); a sandbox network's is §4's. */
  chainId: number | null;
  mode: NetworkMode;
  confirmations: number;
  tokens: { symbol: string; address: string }[];
  /** Live only: the newest head the watcher read, and the last block it finished. */
  headBlock: number | null;
  syncedBlock: number | null;
};

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

type Live = { settings: NetworkSettings; watcher: NetworkWatcher; chainId?: number };

/**
 * The live networks of this deployment: their watchers (each runs where it holds its chain's lease;
 * every instance learns its networks' chain ids in the background) and what the API tells of them.
 * Nothing here calls the chain on a request's path.
 */
export class ChainRail {
  private readonly live: Live[];

  constructor(private readonly deps: { settings: ChainSettings; sql: SqlDatabase; deposits: DepositService; metrics: ChainMetrics; logger: Logger }) {
    const holder = `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
    this.live = deps.settings.networks
      .filter((network) => network.mode === "live")
      .map((settings) => {
        const entry: Live = { settings } as Live;
        entry.watcher = new NetworkWatcher({
          network: settings,
          client: chainClient(settings, deps.settings),
          settings: deps.settings,
          sql: counted(deps.sql, (calls = 1) => deps.metrics.databaseCalls.inc({ network: settings.name }, calls)),
          deposits: deps.deposits,
          metrics: deps.metrics,
          logger: deps.logger,
          holder,
          onChainId: (chainId) => (entry.chainId = chainId),
        });
        return entry;
      });
  }

  start() {
    for (const network of this.live) network.watcher.start();
  }

  async stop() {
    await Promise.all(this.live.map((network) => network.watcher.stop()));
  }

  /** The live network a chain id designates (§4's id of a live network, or the id its RPC reported); undefined when sandbox. */
  liveNetworkFor(chainId: number): string | undefined {
    return this.live.find((network) => network.settings.listedChainId === chainId || network.chainId === chainId)?.settings.name;
  }

  /** A network's chain id as this deployment runs it: a live one's is its RPC's (undefined until it has answered), a sandbox one's §4's. */
  chainIdOf(name: string): number | undefined {
    const live = this.live.find((network) => network.settings.name === name);
    if (live) return live.chainId;
    return this.deps.settings.networks.find((network) => network.name === name)?.listedChainId;
  }

  /** Every network of §4's list, in its order, as this deployment runs it. */
  async networks(): Promise<NetworkView[]> {
    const chainIds = this.live.flatMap((network) => (network.chainId === undefined ? [] : [network.chainId]));
    const cursors = new Map((await cursorsOf(this.deps.sql, chainIds)).map((cursor) => [cursor.chainId, cursor]));
    return this.deps.settings.networks.map((settings) => {
      const live = this.live.find((network) => network.settings === settings);
      const cursor = live?.chainId === undefined ? undefined : cursors.get(live.chainId);
      return {
        network: settings.name,
        chainId: live ? (live.chainId ?? null) : settings.listedChainId,
        mode: settings.mode,
        confirmations: settings.confirmations,
        tokens: Object.entries(settings.tokens).map(([symbol, address]) => ({ symbol, address })),
        headBlock: cursor ? Number(cursor.headBlock) : null,
        syncedBlock: cursor ? Number(cursor.blockNumber) : null,
      };
    });
  }
}
