import { erc20Abi, TransactionReceiptNotFoundError, type Address, type Hash, type LocalAccount, type PublicClient, type TransactionReceipt } from "viem";
import type { PrismaClient } from "../generated/prisma/client.js";
import { prismaSql, type Sql, type SqlDatabase } from "../db/sql.js";
import { inTransaction, type Tx } from "../db/transaction.js";
import type { Logger } from "../logger.js";
import type { ChainMetrics } from "../metrics/chain.js";
import { PassLoop } from "./pass-loop.js";
import { feeCeilingOf, gasLimitFor } from "./send-fees.js";
import type { ChainSettings, NetworkSettings } from "./networks.js";
import { releaseLease, takeLease } from "./records.js";
import {
  activeSenders,
  confirmedFrom,
  markConfirmed,
  markFailed,
  markMined,
  markOrphaned,
  markReopened,
  markReplaced,
  markSent,
  markSigned,
  markUnmined,
  markWaiting,
  outstandingFrom,
  sendsIn,
  SEND_STATUS,
  takeNonces,
  WAITING_FOR,
  type ChainSend,
  type SendPurpose,
  type WaitingFor,
} from "./send-records.js";
import {
  baseUnits,
  cappedFees,
  InexactAmount,
  isAlreadyIn,
  isRevert,
  replacementFees,
  shortError,
  signTransfer,
  transferCall,
  type Fees,
  type TransferCall,
} from "./transactions.js";

/**
 * What a send means to the room that asked for it, each step in the transaction that records it:
 * `sent` when its transaction is broadcast (again with a new hash after a replacement), `confirmed`
 * at the confirmation depth, `failed` when the token refused it or it reverted on chain.
 */
export type SendOutcome = {
  sent(tx: Tx, send: ChainSend, hash: Hash): Promise<void>;
  confirmed(tx: Tx, send: ChainSend, hash: Hash): Promise<void>;
  failed(tx: Tx, send: ChainSend, reason: string): Promise<void>;
};
export type SendOutcomes = Partial<Record<SendPurpose, SendOutcome>>;

export type SenderDeps = {
  network: NetworkSettings;
  client: PublicClient;
  settings: ChainSettings;
  prisma: PrismaClient;
  sql: SqlDatabase;
  /** A token's decimals (src/chain/clients.ts: read once). */
  decimalsOf(token: Address): Promise<number>;
  /** The key that signs for an address the platform holds (the treasury, a deposit address). */
  signerFor(sql: Sql, address: Address): Promise<LocalAccount>;
  outcomes: SendOutcomes;
  /** Before queued sends are signed: sweeps to queue (src/chain/sweeps.ts). */
  beforeSigning?(chainId: number): Promise<void>;
  /** A sweep whose address lacks gas: the treasury sends it `wei` first. */
  needsGas?(tx: Sql, send: ChainSend, wei: bigint): Promise<void>;
  metrics: ChainMetrics;
  logger: Logger;
  holder: string;
};

/** Sends looked at per pass, per state (the rest wait for the next pass). */
const BATCH = 500;
/** Broadcasts recorded per database transaction. */
const RECORD_BATCH = 100;
/**
 * How many blocks past the confirmation depth a send's address stays checked against the chain (at least 64:
 * Ethereum's two epochs to finality), so that a reorg deeper than the depth is found. An address that sends
 * again is checked again, whatever the age of its earlier sends.
 */
const recheckBlocks = (confirmations: number) => BigInt(confirmations + Math.max(64, confirmations));

const WAITING_WHY: Record<WaitingFor, string> = {
  TOKENS: "the sending address lacks the tokens",
  GAS: "the sending address lacks the native coin for gas",
  FEES: "the network's fee is above the sweeps' ceiling (a tenth of CHAIN_MAX_FEE_GWEI)",
};

/** Per sending address, how many of its transactions the chain holds (the next nonce it will mine). */
type ChainCounts = Map<Address, bigint>;

/**
 * One live network's sender. Every CHAIN_POLL_MS (and at once when this instance queues a send),
 * under the chain's sender lease (one sender per chain across instances and workers), it:
 * 1. follows the sends already signed: broadcasts those not yet broadcast (after a crash, the stored
 *    transaction itself), reads receipts of every transaction signed for each (a replacement or the
 *    first), records the one mined, confirms or fails it at the confirmation depth, sends again one
 *    whose block left the chain, and replaces at the same nonce, with higher fees, one not mined in
 *    CHAIN_REPLACE_AFTER_MS;
 * 2. signs the queued sends in order, per sending address, when that address holds the tokens and
 *    the gas (else they wait, PENDING for their owners): estimate gas (a revert is the token refusing:
 *    FAILED), price from the node (EIP-1559), give consecutive nonces and store every signed
 *    transaction in one database transaction, then broadcast them.
 */
export class NetworkSender {
  private chainId?: number;
  private leading = false;
  /** Addresses whose sends failed to sign (each warned of once). */
  private readonly unsendable = new Set<Address>();
  /** Sends whose next replacement would pass the fee ceiling (each counted and logged once). */
  private readonly atCeiling = new Set<string>();
  private readonly loop: PassLoop;
  private readonly log: Logger;

  constructor(private readonly deps: SenderDeps) {
    this.log = deps.logger.child({ network: deps.network.name, role: "sender" });
    this.loop = new PassLoop({
      pollMs: deps.settings.pollMs,
      pass: () => this.tick(),
      succeeded: (afterFailures) => {
        if (afterFailures > 0) this.log.info({ failures: afterFailures }, "chain sender recovered");
      },
      failed: (err, failures) => {
        deps.metrics.senderErrors.inc({ network: deps.network.name });
        if (failures === 1 || failures % 10 === 0) this.log.warn({ err: shortError(err), failures }, "chain sender pass failed; retrying with back-off");
      },
    });
  }

  start() {
    this.loop.start();
  }

  async stop() {
    await this.loop.stop();
    if (this.leading && this.chainId !== undefined) await releaseLease(this.deps.sql, this.chainId, "sender", this.deps.holder).catch(() => undefined);
  }

  /** Something was queued here: a pass now (or right after the one running). */
  nudge() {
    this.loop.nudge();
  }

  private get leaseMs() {
    return 3 * this.deps.settings.rpcTimeoutMs + 5 * this.deps.settings.pollMs;
  }

  private async tick(): Promise<void> {
    const { client, sql, settings } = this.deps;
    if (!settings.watcher) {
      this.loop.halt();
      return;
    }
    this.chainId ??= await client.getChainId();
    const chainId = this.chainId;
    const leading = await takeLease(sql, chainId, "sender", this.deps.holder, this.leaseMs);
    if (leading !== this.leading) this.log.info({ chainId, holder: this.deps.holder }, leading ? "chain sender took the lease" : "chain sender lost the lease");
    this.leading = leading;
    this.deps.metrics.senderPasses.inc({ network: this.deps.network.name, leading: String(leading) });
    if (!leading) return;
    const head = await client.getBlockNumber({ cacheTime: 0 });
    await this.follow(chainId, head);
    await this.deps.beforeSigning?.(chainId);
    await this.signQueued(chainId);
  }

  // ------------------------------------------------------------------ 1. sends already signed

  private async follow(chainId: number, head: bigint) {
    // Read before the receipts: a nonce the chain holds then, with no receipt of the send's own after, was not its own.
    const counts = await this.chainCounts(chainId, head);
    await this.resendDropped(chainId, counts);
    const open = await sendsIn(this.deps.sql, chainId, [SEND_STATUS.SIGNED, SEND_STATUS.SENT, SEND_STATUS.MINED], BATCH);
    const receipts = await Promise.all(open.map((send) => this.receiptOf(send)));
    for (const [i, send] of open.entries()) {
      const receipt = receipts[i];
      const next = counts.get(send.fromAddress) ?? send.nonce!;
      if (receipt) await this.onReceipt(send, receipt, head);
      else if (send.status === SEND_STATUS.MINED) await this.onDropped(send);
      else if (send.nonce! < next) await this.onNonceTaken(send, head);
      else if (send.status === SEND_STATUS.SIGNED || send.broadcastAt === null) await this.broadcast(send);
      // Only the next nonce to mine is outbid: a send behind a gap waits for the gap, not for higher fees.
      else if (send.nonce === next && Date.now() - send.broadcastAt.getTime() >= this.deps.settings.replaceAfterMs) await this.replace(chainId, send);
    }
  }

  /** The chain's count of mined transactions of each address with sends open or recently confirmed. */
  private async chainCounts(chainId: number, head: bigint): Promise<ChainCounts> {
    const addresses = await activeSenders(this.deps.sql, chainId, head - recheckBlocks(this.deps.network.confirmations));
    const counts = await Promise.all(addresses.map((address) => this.deps.client.getTransactionCount({ address, blockTag: "latest" })));
    return new Map(addresses.map((address, i) => [address, BigInt(counts[i])]));
  }

  /**
   * A CONFIRMED send at or above its address's count is not on the chain: a reorg deeper than the confirmation
   * depth took it off. Its nonce is free (the count is below it), so the same signed transaction goes out again:
   * it cannot pay twice, and it fills the nonce the later sends wait behind (the nonces resync from the chain).
   * An error, a metric and the operator's report (`reorgedAt`), never only a warning.
   */
  private async resendDropped(chainId: number, counts: ChainCounts) {
    for (const [from, count] of counts) {
      const dropped = await confirmedFrom(this.deps.sql, chainId, from, count, BATCH);
      const receipts = await Promise.all(dropped.map((send) => this.receiptOf(send)));
      for (const [i, send] of dropped.entries()) {
        if (receipts[i]) continue; // mined again since the count was read
        if (!(await this.inTx((_tx, sql) => markReopened(sql, send.id)))) continue;
        this.deps.metrics.sendsReorged.inc({ network: this.deps.network.name });
        this.log.error(
          { purpose: send.purpose, purposeId: send.purposeId, transactionHash: send.transactionHash, nonce: send.nonce?.toString(), blockNumber: send.blockNumber?.toString(), chainCount: count.toString() },
          "a confirmed send left the chain: a reorg deeper than the confirmation depth; broadcasting the same transaction again",
        );
        await this.broadcast({ ...send, status: SEND_STATUS.SENT });
      }
    }
  }

  /**
   * No transaction of the send is on the chain, yet the chain's count has passed its nonce: another transaction,
   * not signed here (the key used outside the platform), took it. Once that is so at the confirmation depth, the
   * send can never be mined as signed, and signing it again at another nonce could pay twice (the first comes
   * back if that transaction is reorganised away): ORPHANED, for the operator. Before the depth: the next pass.
   */
  private async onNonceTaken(send: ChainSend, head: bigint) {
    const atDepth = head - BigInt(this.deps.network.confirmations) + 1n;
    const countAtDepth = BigInt(await this.deps.client.getTransactionCount({ address: send.fromAddress, blockNumber: atDepth }));
    if (countAtDepth <= send.nonce! || (await this.receiptOf(send))) return;
    const reason = `Nonce ${send.nonce} of ${send.fromAddress} was taken by a transaction the platform did not sign`;
    if (!(await this.inTx((_tx, sql) => markOrphaned(sql, send.id, reason)))) return;
    this.deps.metrics.sendsOrphaned.inc({ network: this.deps.network.name });
    this.log.error({ purpose: send.purpose, purposeId: send.purposeId, nonce: send.nonce?.toString(), from: send.fromAddress }, "send orphaned: another transaction took its nonce; the operator decides");
  }

  /** The receipt of whichever of its transactions was mined (at most one can be: they share a nonce). */
  private async receiptOf(send: ChainSend): Promise<TransactionReceipt | undefined> {
    const found = await Promise.all(
      send.attempts.map((hash) =>
        this.deps.client.getTransactionReceipt({ hash }).catch((err) => {
          if (err instanceof TransactionReceiptNotFoundError) return undefined;
          throw err;
        }),
      ),
    );
    return found.find((receipt) => receipt !== undefined);
  }

  private async onReceipt(send: ChainSend, receipt: TransactionReceipt, head: bigint) {
    const hash = receipt.transactionHash;
    if (send.status !== SEND_STATUS.MINED || send.transactionHash !== hash || send.blockNumber !== receipt.blockNumber) {
      await this.inTx(async (tx, sql) => {
        if (!(await markMined(sql, send.id, hash, receipt.blockNumber))) return;
        // Seen mined for the first time (perhaps before its broadcast was recorded: a crash between the two), or
        // another of its transactions was mined (a replacement, or the first after one): its owner's record follows it.
        if (send.status !== SEND_STATUS.MINED || send.transactionHash !== hash) await this.outcome(send)?.sent(tx, send, hash);
      });
    }
    if (head - receipt.blockNumber + 1n < BigInt(this.deps.network.confirmations)) return;
    const network = this.deps.network.name;
    if (receipt.status === "success") {
      await this.inTx(async (tx, sql) => {
        if (await markConfirmed(sql, send.id)) await this.outcome(send)?.confirmed(tx, send, hash);
      });
      this.deps.metrics.sendsConfirmed.inc({ network, purpose: send.purpose });
    } else {
      const reason = `The transfer reverted on chain (transaction ${hash})`;
      await this.fail(send, reason);
      this.log.error({ purpose: send.purpose, purposeId: send.purposeId, transactionHash: hash }, "send reverted on chain");
    }
  }

  /** Mined, and now no receipt: its block left the canonical chain. The same transaction goes out again. */
  private async onDropped(send: ChainSend) {
    await this.inTx((_tx, sql) => markUnmined(sql, send.id));
    this.deps.metrics.sendsDropped.inc({ network: this.deps.network.name });
    this.log.warn({ purpose: send.purpose, purposeId: send.purposeId, transactionHash: send.transactionHash }, "send's block left the canonical chain: broadcasting it again");
    await this.broadcast({ ...send, status: SEND_STATUS.SENT });
  }

  /** Broadcasts the send's current transaction; recorded SENT (and its owner told) once the node has it. */
  private broadcast(send: ChainSend) {
    return this.broadcastAll([send]);
  }

  /**
   * Broadcasts these sends' transactions (one JSON-RPC batch), then records those the node took in
   * a few database transactions rather than one each. A send whose record fails stays SIGNED or SENT
   * and is broadcast and recorded again by the next pass (the node answers "already known").
   */
  private async broadcastAll(sends: ChainSend[]) {
    const taken = await Promise.all(
      sends.map(async (send) => {
        try {
          await this.deps.client.sendRawTransaction({ serializedTransaction: send.rawTransaction! });
          return true;
        } catch (err) {
          if (isAlreadyIn(err)) return true;
          this.deps.metrics.senderErrors.inc({ network: this.deps.network.name });
          this.log.warn({ purpose: send.purpose, purposeId: send.purposeId, transactionHash: send.transactionHash, err: shortError(err) }, "broadcast refused; retrying on the next pass");
          return false;
        }
      }),
    );
    const accepted = sends.filter((_, i) => taken[i]);
    for (let i = 0; i < accepted.length; i += RECORD_BATCH) {
      const batch = accepted.slice(i, i + RECORD_BATCH);
      await this.inTx(async (tx, sql) => {
        for (const send of batch) if (await markSent(sql, send.id)) await this.outcome(send)?.sent(tx, send, send.transactionHash!);
      });
      for (const send of batch) this.deps.metrics.sendsBroadcast.inc({ network: this.deps.network.name, purpose: send.purpose });
    }
  }

  /**
   * Not mined in time: the same call at the same nonce, with fees at least 12.5% higher (at most the network's
   * ceiling), stored first, then broadcast. A bump above the ceiling is never signed: the send waits at its fees.
   */
  private async replace(chainId: number, send: ChainSend) {
    const previous = { maxFeePerGas: send.maxFeePerGas!, maxPriorityFeePerGas: send.maxPriorityFeePerGas! };
    const ceiling = this.ceilingOf(send);
    const fees = replacementFees(previous, await this.deps.client.estimateFeesPerGas(), ceiling);
    if (!fees) {
      if (!this.atCeiling.has(send.id)) {
        this.atCeiling.add(send.id);
        this.deps.metrics.feeCeilingReached.inc({ network: this.deps.network.name });
        this.log.error(
          { purpose: send.purpose, purposeId: send.purposeId, nonce: send.nonce?.toString(), maxFeePerGas: send.maxFeePerGas?.toString(), ceiling: ceiling.toString() },
          "send not mined and at the fee ceiling: no replacement above CHAIN_MAX_FEE_GWEI; it waits for fees to fall",
        );
      }
      return;
    }
    const call = transferCall(send, await this.decimalsOf(send.tokenAddress));
    const account = await this.deps.signerFor(this.deps.sql, send.fromAddress);
    const signed = await signTransfer(account, chainId, send.nonce!, call, send.gasLimit!, fees);
    if (!(await this.inTx((_tx, sql) => markReplaced(sql, send.id, signed)))) return;
    this.deps.metrics.sendsReplaced.inc({ network: this.deps.network.name });
    this.log.warn({ purpose: send.purpose, purposeId: send.purposeId, nonce: send.nonce?.toString(), from: send.transactionHash, to: signed.hash }, "send not mined in time: replaced at its nonce with higher fees");
    await this.broadcast({ ...send, status: SEND_STATUS.SIGNED, transactionHash: signed.hash, rawTransaction: signed.raw });
  }

  // ------------------------------------------------------------------ 2. queued sends

  private async signQueued(chainId: number) {
    const queued = await sendsIn(this.deps.sql, chainId, [SEND_STATUS.QUEUED], BATCH);
    // The gauge counts the sends waiting at every sending address of the network (the treasury, deposit addresses).
    const waiting: Record<WaitingFor, number> = { TOKENS: 0, GAS: 0, FEES: 0 };
    if (queued.length > 0) {
      const fees = await this.deps.client.estimateFeesPerGas();
      const byAddress = new Map<Address, ChainSend[]>();
      for (const send of queued) byAddress.set(send.fromAddress, [...(byAddress.get(send.fromAddress) ?? []), send]);
      for (const [from, sends] of byAddress) {
        // One address that cannot send (its RPC calls failing, a key the master key does not derive) holds up no other.
        const waitingFrom = await this.signFrom(chainId, from, sends, fees).catch((err: unknown) => {
          this.deps.metrics.senderErrors.inc({ network: this.deps.network.name });
          if (!this.unsendable.has(from)) this.log.warn({ from, err: shortError(err) }, "sends from this address cannot be signed now; retrying on the next passes");
          this.unsendable.add(from);
          return { TOKENS: [], GAS: [], FEES: [] };
        });
        for (const reason of WAITING_FOR) waiting[reason] += waitingFrom[reason].length;
      }
    }
    for (const reason of WAITING_FOR) this.deps.metrics.sendsWaiting.set({ network: this.deps.network.name, reason }, waiting[reason]);
  }

  /**
   * The queued sends of one address, in order: those it can pay for get consecutive nonces and go out; those that
   * wait, returned. `nodeFees` are the node's; each send bids them held to its ceiling (feeCeilingOf), and a sweep
   * waits while the node asks more than the sweeps' ceiling.
   */
  private async signFrom(chainId: number, from: Address, queued: ChainSend[], nodeFees: Fees): Promise<Record<WaitingFor, ChainSend[]>> {
    const { client, sql } = this.deps;
    const [native, outstanding] = await Promise.all([client.getBalance({ address: from }), outstandingFrom(sql, chainId, from)]);
    let gasLeft = native;
    const tokensLeft = new Map<Address, bigint>();
    for (const owed of outstanding) {
      gasLeft -= BigInt(owed.gasCost.split(".")[0]);
      if (owed.tokenAddress === null) gasLeft -= await this.units(owed.amount, null);
    }
    const tokens = [...new Set(queued.flatMap((send) => (send.tokenAddress ? [send.tokenAddress] : [])))];
    const balances = await Promise.all(tokens.map((token) => client.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [from] })));
    for (const [i, token] of tokens.entries()) {
      const owed = outstanding.find((row) => row.tokenAddress === token);
      tokensLeft.set(token, balances[i] - (owed ? await this.units(owed.amount, token) : 0n));
    }

    const calls: { send: ChainSend; call: TransferCall }[] = [];
    const waiting: Record<WaitingFor, ChainSend[]> = { TOKENS: [], GAS: [], FEES: [] };
    for (const send of queued) {
      if (send.purpose === "SWEEP" && nodeFees.maxFeePerGas > this.ceilingOf(send)) {
        waiting.FEES.push(send);
        continue;
      }
      let call: TransferCall;
      try {
        call = transferCall(send, await this.decimalsOf(send.tokenAddress));
      } catch (err) {
        if (!(err instanceof InexactAmount)) throw err;
        await this.fail(send, `The amount cannot be sent exactly: ${err.message}`);
        continue;
      }
      if (send.tokenAddress !== null) {
        if (call.units > tokensLeft.get(send.tokenAddress)!) {
          waiting.TOKENS.push(send);
          continue;
        }
        tokensLeft.set(send.tokenAddress, tokensLeft.get(send.tokenAddress)! - call.units);
      }
      calls.push({ send, call });
    }
    const estimates = await Promise.all(calls.map(({ call }) => client.estimateGas({ account: from, to: call.to, data: call.data, value: call.value }).catch((err: unknown) => err)));

    const ready: { send: ChainSend; call: TransferCall; gasLimit: bigint; fees: Fees }[] = [];
    for (const [i, { send, call }] of calls.entries()) {
      const estimate = estimates[i];
      if (typeof estimate !== "bigint") {
        if (!isRevert(estimate)) throw estimate;
        await this.fail(send, `The token refused the transfer: ${shortError(estimate)}`);
        continue;
      }
      const gasLimit = gasLimitFor(send.purpose, estimate);
      const fees = cappedFees(nodeFees, this.ceilingOf(send));
      const cost = gasLimit * fees.maxFeePerGas + call.value;
      if (cost > gasLeft) {
        // Later sends need gas too, and nonces keep the queue's order: all of them wait.
        waiting.GAS.push(...calls.slice(i).map((c) => c.send));
        if (send.purpose === "SWEEP" && this.deps.needsGas) await this.inTx((_tx, tx) => this.deps.needsGas!(tx, send, cost - gasLeft));
        break;
      }
      gasLeft -= cost;
      ready.push({ send, call, gasLimit, fees });
    }
    await this.wait(waiting);
    if (ready.length === 0) return waiting;

    const account = await this.deps.signerFor(sql, from);
    // The chain's count covers transactions sent from this address by anyone; the stored one, those signed and not yet broadcast.
    const onChain = BigInt(await client.getTransactionCount({ address: from, blockTag: "pending" }));
    const signed = await this.inTx(async (_tx, tx) => {
      let nonce = await takeNonces(tx, chainId, from, onChain, ready.length);
      const out: ChainSend[] = [];
      for (const { send, call, gasLimit, fees } of ready) {
        const transaction = await signTransfer(account, chainId, nonce, call, gasLimit, fees);
        if (!(await markSigned(tx, send.id, nonce, transaction))) throw new Error(`send ${send.id} left QUEUED while it was signed`);
        out.push({ ...send, status: SEND_STATUS.SIGNED, nonce, transactionHash: transaction.hash, rawTransaction: transaction.raw });
        nonce++;
      }
      return out;
    });
    await this.broadcastAll(signed);
    return waiting;
  }

  /** Sends that cannot go yet: logged once as they start waiting, retried every pass. */
  private async wait(waiting: Record<WaitingFor, ChainSend[]>) {
    for (const reason of WAITING_FOR) {
      const sends = waiting[reason];
      const newly = sends.filter((send) => send.waitingFor !== reason);
      if (newly.length > 0) {
        await markWaiting(this.deps.sql, newly.map((send) => send.id), reason);
        this.log.warn({ count: newly.length, from: newly[0].fromAddress, purposes: newly.slice(0, 10).map((send) => `${send.purpose}:${send.purposeId}`) }, `sends wait: ${WAITING_WHY[reason]}`);
      }
    }
  }

  private async fail(send: ChainSend, reason: string) {
    await this.inTx(async (tx, sql) => {
      if (await markFailed(sql, send.id, reason)) await this.outcome(send)?.failed(tx, send, reason);
    });
    this.deps.metrics.sendsFailed.inc({ network: this.deps.network.name, purpose: send.purpose });
    this.log.warn({ purpose: send.purpose, purposeId: send.purposeId, reason }, "send failed");
  }

  // ------------------------------------------------------------------ helpers

  private ceilingOf(send: ChainSend): bigint {
    return feeCeilingOf(send.purpose, this.deps.network.maxFeePerGas);
  }

  private outcome(send: ChainSend): SendOutcome | undefined {
    return this.deps.outcomes[send.purpose];
  }

  private inTx<T>(work: (tx: Tx, sql: Sql) => Promise<T>): Promise<T> {
    return inTransaction(this.deps.prisma, (tx) => work(tx, prismaSql(tx)));
  }

  /** A token's decimals; native coin (null) has 18. */
  private decimalsOf(token: Address | null): Promise<number> {
    return token === null ? Promise.resolve(18) : this.deps.decimalsOf(token);
  }

  private async units(amount: string, token: Address | null): Promise<bigint> {
    return baseUnits(amount, await this.decimalsOf(token));
  }
}
