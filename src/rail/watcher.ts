import { BlockNotFoundError, erc20Abi, formatUnits, getAbiItem, type Address, type Hash, type PublicClient } from "viem";
import { Decimal } from "decimal.js";
import type { Sql, SqlDatabase } from "../db/sql.js";
import type { Deposit } from "../generated/prisma/client.js";
import type { DepositService } from "../deposits/service.js";
import type { Logger } from "../logger.js";
import type { TokenSymbol } from "../providers/chains.js";
import type { ChainMetrics } from "../metrics/chain.js";
import { PassLoop } from "../chain/pass-loop.js";
import { chainProvider, type ChainSettings, type NetworkSettings } from "../chain/networks.js";
import { DueSettlement } from "./due-settlement.js";
import { NetworkTokens, type TokenAvailability } from "../chain/tokens.js";
import {
  completedAbove,
  flagDeposits,
  flaggedCounts,
  keepBlocks,
  moveCursor,
  readCursor,
  reattachDeposit,
  recordHead,
  rewindTo,
  startCursor,
  storedBlocks,
  takeLease,
  releaseLease,
  trackDeposit,
  trackedTransfers,
  walletOwners,
  type BlockHeader,
  type Cursor,
  type TrackedTransfer,
} from "../chain/records.js";
import { withdrawForOrphans } from "../chain/sweeps.js";
import { transferKeys } from "../chain/transfer-identity.js";

const TRANSFER = getAbiItem({ abi: erc20Abi, name: "Transfer" });
/** The largest amount a deposit column holds (NUMERIC(38,18): 20 integer digits). */
const MAX_AMOUNT = new Decimal("1e20");
/** Blocks kept beyond the confirmation depth, for walking back to the common ancestor of a reorg. */
const KEPT_MARGIN = 32n;
/** Event ids tried for one new deposit: `<hash>:<logIndex>`, then `:2`, `:3`… when a failed deposit holds it. */
const EVENT_ID_TRIES = 8;

export type WatcherDeps = {
  network: NetworkSettings;
  client: PublicClient;
  settings: ChainSettings;
  sql: SqlDatabase;
  deposits: Pick<DepositService, "receive" | "complete" | "fail" | "announce">;
  metrics: ChainMetrics;
  logger: Logger;
  /** Who this instance is, in the lease table. */
  holder: string;
  /** Called once the RPC has told the chain id. */
  onChainId(chainId: number): void;
  /** Called with every check of a token (whether it is available on the chain, and why not). */
  onTokenChecked(symbol: TokenSymbol, availability: TokenAvailability): void;
};

/** The chain moved while the watcher read it (or another watcher moved the cursor): the tick is dropped and the next one starts over. */
class ChainMoved extends Error {}

type Match = {
  owner: { clientId: string; userId: string };
  symbol: TokenSymbol;
  token: Address;
  amount: Decimal;
  transactionHash: Hash;
  logIndex: number;
  blockNumber: bigint;
  blockHash: Hash;
  transferKey: string;
};

/** The deposit recorded for this transfer (legacy rows, without a key, by their log index), failed ones apart. */
function recordedAs(tracked: TrackedTransfer[], match: Match) {
  const same = tracked.filter(
    (t) => t.transactionHash === match.transactionHash && (t.transferKey === null ? t.logIndex === match.logIndex : t.transferKey === match.transferKey),
  );
  return { live: same.find((t) => t.outcome !== "FAILED"), failed: same.filter((t) => t.outcome === "FAILED").length };
}

/**
 * One live network's watcher. Every CHAIN_POLL_MS, under the chain's lease (one watcher per chain
 * across instances and workers), it:
 * 1. checks that the block it finished last is still canonical, else walks back to the common
 *    ancestor through the recent blocks it kept, detaching the open deposits above it;
 * 2. reads the Transfer logs of the configured tokens for the next block range (one eth_getLogs),
 *    the headers of the blocks within the confirmation depth of the head (linked parent to child),
 *    and keeps the transfers to custodial addresses (one `= ANY` query for the range);
 * 3. records them as PENDING deposits, the headers, and the new cursor, in one transaction;
 * 4. completes the deposits whose block is `confirmations` deep, and fails the detached ones whose
 *    depth has passed without the transfer coming back.
 * An RPC that fails or hangs costs this loop a back-off, never a request: it lags and catches up.
 */
export class NetworkWatcher {
  private chainId?: number;
  private leading = false;
  private readonly loop: PassLoop;
  private readonly tokens: NetworkTokens;
  private readonly provider: string;
  private readonly log: Logger;
  private readonly due: DueSettlement;

  constructor(private readonly deps: WatcherDeps) {
    this.provider = chainProvider(deps.network.name);
    this.log = deps.logger.child({ network: deps.network.name });
    this.tokens = new NetworkTokens({ network: deps.network, client: deps.client, log: this.log, checked: deps.onTokenChecked });
    const labels = { network: deps.network.name };
    this.due = new DueSettlement({ ...deps, log: this.log, halted: () => this.loop.halted });
    this.loop = new PassLoop({
      pollMs: deps.settings.pollMs,
      pass: () =>
        this.tick().catch((err) => {
          if (!(err instanceof ChainMoved)) throw err;
          this.log.info({ reason: err.message }, "chain moved during the pass; starting over");
        }),
      succeeded: (afterFailures) => {
        if (afterFailures > 0) this.log.info({ failures: afterFailures }, "chain watcher recovered");
        deps.metrics.rpcUp.set(labels, 1);
      },
      failed: (err, failures) => {
        deps.metrics.rpcUp.set(labels, 0);
        deps.metrics.errors.inc(labels);
        // The first failure and then one in ten: a dead RPC must not flood the log.
        if (failures === 1 || failures % 10 === 0) this.log.warn({ err, failures }, "chain watcher pass failed; retrying with back-off");
      },
    });
  }

  start() {
    this.loop.start();
  }

  async stop() {
    await this.loop.stop();
    if (this.leading && this.chainId !== undefined) await releaseLease(this.deps.sql, this.chainId, "watcher", this.deps.holder).catch(() => undefined);
  }

  /** Checks the tokens not yet found available (the server's start does so before its first request); throws when the RPC fails. */
  checkTokens(): Promise<void> {
    return this.tokens.check();
  }

  private get leaseMs() {
    // Outlasts a pass (a few RPC calls, each bounded by its time-out); a dead holder is replaced after it.
    return 3 * this.deps.settings.rpcTimeoutMs + 5 * this.deps.settings.pollMs;
  }

  private async tick(): Promise<void> {
    const { client, sql } = this.deps;
    if (this.chainId === undefined) {
      this.chainId = await client.getChainId();
      this.deps.onChainId(this.chainId);
      this.log.info({ chainId: this.chainId }, "chain RPC answered");
    }
    // Every instance checks the tokens itself (what it answers and refuses depends on it); one that
    // fails is re-checked every pass, the others go on being watched.
    await this.checkTokens();
    // An instance that does not watch (CHAIN_WATCHER=off) only needed the chain id and the tokens, for what it answers.
    if (!this.deps.settings.watcher) {
      if (this.tokens.allAvailable) this.loop.halt();
      return;
    }
    const chainId = this.chainId;
    const leading = await takeLease(sql, chainId, "watcher", this.deps.holder, this.leaseMs);
    if (leading !== this.leading) this.log.info({ chainId, holder: this.deps.holder }, leading ? "chain watcher took the lease" : "chain watcher lost the lease");
    this.leading = leading;
    if (!leading) {
      // Only the holder reports the network's progress (the cluster's scrape takes the highest value of each gauge).
      this.clearReport();
      return;
    }
    const [head, stored] = await Promise.all([client.getBlockNumber({ cacheTime: 0 }), readCursor(sql, chainId)]);
    let cursor = stored ?? (await this.firstCursor(chainId, head));
    if ((await this.hashAt(cursor.blockNumber)) !== cursor.blockHash) {
      cursor = await this.rewind(chainId, cursor, head);
    } else if (cursor.blockNumber >= head) {
      await recordHead(sql, chainId, head);
    }
    // Behind the head: range after range without waiting for the next poll, until caught up.
    while (cursor.blockNumber < head && !this.loop.halted) {
      cursor = await this.scan(chainId, cursor, head);
      this.report(head, cursor);
      if (cursor.blockNumber < head) {
        // A long catch-up keeps its lease (renewed with every range) and settles as it goes.
        if (!(await takeLease(sql, chainId, "watcher", this.deps.holder, this.leaseMs))) throw new ChainMoved("the lease was taken over");
        await this.due.settle(chainId, cursor);
      }
    }
    this.report(head, cursor);
    await this.due.settle(chainId, cursor);
    const flagged = await flaggedCounts(sql, chainId);
    for (const [flag, count] of Object.entries(flagged)) this.deps.metrics.depositsFlagged.set({ network: this.deps.network.name, flag }, count);
  }

  private report(head: bigint, cursor: Cursor) {
    const network = this.deps.network.name;
    this.deps.metrics.head.set({ network }, Number(head));
    this.deps.metrics.synced.set({ network }, Number(cursor.blockNumber));
    this.deps.metrics.lag.set({ network }, Number(head - cursor.blockNumber));
  }

  private clearReport() {
    const network = this.deps.network.name;
    for (const gauge of [this.deps.metrics.head, this.deps.metrics.synced, this.deps.metrics.lag]) gauge.remove({ network });
    for (const flag of ["ORPHANED", "UNSETTLEABLE"]) this.deps.metrics.depositsFlagged.remove({ network, flag });
  }

  /** The first start on this chain: CHAIN_START_BLOCK_<NETWORK>, else the head, is the first block scanned. */
  private async firstCursor(chainId: number, head: bigint): Promise<Cursor> {
    const first = this.deps.network.startBlock ?? head;
    const before = await this.deps.client.getBlock({ blockNumber: first > 0n ? first - 1n : 0n });
    await startCursor(this.deps.sql, chainId, this.deps.network.name, { number: before.number, hash: before.hash }, head);
    this.log.info({ chainId, firstBlock: first.toString() }, "chain watcher starts");
    const cursor = await readCursor(this.deps.sql, chainId);
    if (!cursor) throw new ChainMoved("cursor not written");
    return cursor;
  }

  /** The finished block left the canonical chain: back to the newest kept block that is still on it. */
  private async rewind(chainId: number, cursor: Cursor, head: bigint): Promise<Cursor> {
    const kept = await storedBlocks(this.deps.sql, chainId, cursor.blockNumber);
    const canonical = await Promise.all(kept.map((block) => this.hashAt(block.number)));
    const index = kept.findIndex((block, i) => canonical[i] === block.hash);
    let ancestor: Cursor;
    if (index >= 0) {
      ancestor = { blockNumber: kept[index].number, blockHash: kept[index].hash };
    } else {
      // Deeper than every kept block: start again below the oldest (its deposits, if any, are re-read).
      const below = (kept.at(-1)?.number ?? cursor.blockNumber) - 1n;
      const block = await this.deps.client.getBlock({ blockNumber: below < 0n ? 0n : below });
      ancestor = { blockNumber: block.number, blockHash: block.hash };
      this.log.error({ chainId, from: cursor.blockNumber.toString(), to: ancestor.blockNumber.toString() }, "reorg deeper than the blocks kept");
    }
    // A completed deposit above the ancestor whose block is no longer canonical lost its transfer: a
    // reorg deeper than the depth. Each is flagged ORPHANED once (its credit stays; docs/chain.md).
    const completed = await completedAbove(this.deps.sql, chainId, ancestor.blockNumber);
    const heights = [...new Set(completed.map((deposit) => deposit.blockNumber))];
    const canonicalAt = new Map(await Promise.all(heights.map(async (height) => [height, await this.hashAt(height)] as const)));
    const lost = completed.filter((deposit) => canonicalAt.get(deposit.blockNumber) !== deposit.blockHash).map((deposit) => deposit.depositId);
    const orphaned = await this.deps.sql.transaction(async (tx) => {
      if (!(await moveCursor(tx, chainId, cursor, ancestor, head))) throw new ChainMoved("the cursor moved");
      await rewindTo(tx, chainId, ancestor.blockNumber);
      const flagged = await flagDeposits(tx, lost, "ORPHANED");
      await withdrawForOrphans(tx, flagged);
      return flagged;
    });
    const network = this.deps.network.name;
    this.deps.metrics.reorgs.inc({ network });
    const depth = Number(cursor.blockNumber - ancestor.blockNumber);
    const fields = { chainId, depth, ancestor: ancestor.blockNumber.toString(), confirmations: this.deps.network.confirmations };
    if (orphaned.length > 0) this.deps.metrics.depositsOrphaned.inc({ network }, orphaned.length);
    if (depth >= this.deps.network.confirmations || orphaned.length > 0) {
      this.deps.metrics.deepReorgs.inc({ network });
      this.log.error({ ...fields, orphaned: orphaned.length, depositIds: orphaned }, "reorg deeper than the confirmation depth: completed deposits whose transfer left the chain are flagged ORPHANED");
    } else this.log.warn(fields, "reorg: back to the common ancestor");
    return ancestor;
  }

  /** The canonical hash at a height; undefined when the chain is not that high (any more: a rollback). */
  private async hashAt(blockNumber: bigint): Promise<Hash | undefined> {
    try {
      return (await this.deps.client.getBlock({ blockNumber })).hash;
    } catch (err) {
      if (err instanceof BlockNotFoundError) return undefined;
      throw err;
    }
  }

  /** The next block range: its transfers to custodial addresses become PENDING deposits, with the cursor, in one transaction. */
  private async scan(chainId: number, cursor: Cursor, head: bigint): Promise<Cursor> {
    const { client, settings, network } = this.deps;
    const from = cursor.blockNumber + 1n;
    const to = head - from + 1n > BigInt(settings.blockRange) ? from + BigInt(settings.blockRange) - 1n : head;
    const depth = BigInt(network.confirmations);
    // Blocks within the confirmation depth of the head may still be reorganised: their headers are read
    // and linked; those of the kept margin below too, so that a reorg finds its exact common ancestor.
    const recentFrom = head - depth - KEPT_MARGIN + 1n > from ? head - depth - KEPT_MARGIN + 1n : from;
    const numbers: bigint[] = [];
    for (let n = recentFrom; n <= to; n++) numbers.push(n);
    if (numbers.at(-1) !== to) numbers.push(to);
    const tokens = this.tokens.available;
    const [logs, blocks] = await Promise.all([
      // No token available: no logs to read (an empty address list would ask for every contract's).
      tokens.length === 0 ? [] : client.getLogs({ address: tokens.map((token) => token.address), event: TRANSFER, fromBlock: from, toBlock: to }),
      Promise.all(numbers.map((blockNumber) => client.getBlock({ blockNumber }))),
    ]);
    const headers: BlockHeader[] = blocks.map((block) => ({ number: block.number, hash: block.hash, parentHash: block.parentHash }));
    const byNumber = new Map(headers.map((header) => [header.number, header]));
    this.checkLinked(cursor, headers);
    const end = byNumber.get(to)!;

    const transfers = logs.filter((log) => !log.removed && log.args.to && log.args.value !== undefined && log.args.value > 0n);
    for (const log of transfers) {
      const header = byNumber.get(log.blockNumber);
      if (header && header.hash !== log.blockHash) throw new ChainMoved(`block ${log.blockNumber} changed between reads`);
    }
    this.deps.metrics.logs.inc({ network: network.name }, logs.length);
    const keys = transferKeys(transfers);
    const recorded = await this.deps.sql.transaction(async (tx) => {
      if (!(await moveCursor(tx, chainId, cursor, { blockNumber: to, blockHash: end.hash }, head))) throw new ChainMoved("the cursor moved");
      const owners = await walletOwners(tx, [...new Set(transfers.map((log) => log.args.to!))], network.livemode ? "live" : "test");
      const matches = transfers.flatMap((log): Match[] => {
        const owner = owners.get(log.args.to!);
        const token = tokens.find((t) => t.address.toLowerCase() === log.address.toLowerCase());
        if (!owner || !token) return [];
        const amount = new Decimal(formatUnits(log.args.value!, this.tokens.decimalsOf(token.address)));
        if (amount.gte(MAX_AMOUNT)) {
          this.log.error({ transactionHash: log.transactionHash, logIndex: log.logIndex }, "transfer too large for a deposit record; skipped");
          return [];
        }
        const place = { transactionHash: log.transactionHash, logIndex: log.logIndex, blockNumber: log.blockNumber, blockHash: log.blockHash, transferKey: keys.get(log)! };
        return [{ owner, symbol: token.symbol, token: token.address, amount, ...place }];
      });
      const tracked = await trackedTransfers(tx, chainId, [...new Set(matches.map((match) => match.transactionHash))]);
      const created: Deposit[] = [];
      for (const match of matches) {
        const { live, failed } = recordedAs(tracked, match);
        if (live) {
          // Seen before: mined again after a reorg, it goes on as the same deposit, where it is now (never a second credit).
          if (live.blockHash !== match.blockHash || live.logIndex !== match.logIndex) {
            await reattachDeposit(tx, live.depositId, match);
            if (live.flag === "ORPHANED") this.log.warn({ chainId, depositId: live.depositId, transactionHash: match.transactionHash }, "an ORPHANED deposit's transfer is back on the canonical chain: flag cleared");
          }
          continue;
        }
        // First seen, or mined again after its deposit FAILED: a deposit, credited once at its depth.
        const deposit = await this.receiveTransfer(tx, chainId, match, failed);
        await trackDeposit(tx, deposit.id, chainId, match);
        created.push(deposit);
      }
      await keepBlocks(tx, chainId, headers, to - depth - KEPT_MARGIN);
      return created;
    });
    if (recorded.length > 0) {
      this.deps.deposits.announce(recorded);
      this.deps.metrics.depositsSeen.inc({ network: network.name }, recorded.length);
    }
    return { blockNumber: to, blockHash: end.hash };
  }

  /**
   * A new PENDING deposit for the transfer. Its event id is `<hash>:<logIndex>`; when a deposit of
   * the same transaction holds that one (a failed deposit of this transfer, or another transfer
   * seen there before a re-mine moved the logs), the next free `<hash>:<logIndex>:<n>`.
   */
  private async receiveTransfer(tx: Sql, chainId: number, match: Match, failedBefore: number): Promise<Deposit> {
    const base = `${match.transactionHash}:${match.logIndex}`;
    for (let attempt = 1; attempt <= EVENT_ID_TRIES + failedBefore; attempt++) {
      const deposit = await this.deps.deposits.receive(tx, {
        provider: this.provider,
        eventId: attempt === 1 ? base : `${base}:${attempt}`,
        clientId: match.owner.clientId,
        userId: match.owner.userId,
        amount: match.amount,
        currency: match.symbol,
        tokenAddress: match.token,
        transactionHash: match.transactionHash,
        chainId,
        live: true,
      });
      if (deposit) return deposit;
    }
    throw new Error(`no free event id for the transfer ${base}`);
  }

  /** The recent headers must chain from the cursor, parent to child; else a reorg came between the reads. */
  private checkLinked(cursor: Cursor, headers: BlockHeader[]) {
    headers.forEach((header, i) => {
      const parent = i === 0 ? (header.number === cursor.blockNumber + 1n ? cursor.blockHash : undefined) : headers[i - 1].number === header.number - 1n ? headers[i - 1].hash : undefined;
      if (parent !== undefined && header.parentHash !== parent) throw new ChainMoved(`block ${header.number} does not follow ${header.number - 1n}`);
    });
  }
}
