import { randomBytes } from "node:crypto";
import type { Decimal } from "decimal.js";
import type { Prisma, PrismaClient, User, Withdrawal } from "../generated/prisma/client.js";
import { inTransaction, type Tx } from "../db/transaction.js";
import { prismaSql } from "../db/sql.js";
import { afterCommit } from "../db/unit-of-work.js";
import type { SendQueue } from "../chain/send-queue.js";
import type { LiveNetworks } from "../chain/live.js";
import type { Destinations } from "../chain/destinations.js";
import type { SendOutcome } from "../chain/sender.js";
import { recordEvent } from "../events/log.js";
import { modeOf, type Mode } from "../modes.js";
import { withdrawQueuedSend } from "../chain/send-records.js";
import { withdrawalObject } from "./representation.js";
import { developerFeePostings, parseDeveloperFee } from "../developer-fees/rules.js";
import { AppError, badInput, notFound } from "../errors.js";
import type { EventType } from "../events/types.js";
import { Exact, parseAmount } from "../money/amount.js";
import { newMetadata, type MetadataChanges } from "../metadata.js";
import type { LedgerService } from "../ledger/service.js";
import { feePostings, type Posting } from "../ledger/types.js";
import type { BusinessMetrics } from "../metrics/metrics.js";
import type { Currency } from "../providers/fx.js";
import type { UserService } from "../users/service.js";
import { parseBankCurrency, parseBankWithdrawal, parseNgnWithdrawal, parseUsdcWithdrawal } from "./validation.js";

/**
 * PENDING at initiation (the money is already debited) → PROCESSING (the payout provider accepted it)
 * → COMPLETED; FAILED from PENDING or PROCESSING (amount and fee come back); RETURNED from COMPLETED
 * (the bank sent the money back: the amount comes back, the developer fee is kept); CANCELLED from
 * PENDING by the client, before anything was sent or signed (amount and fee come back).
 */
export const WITHDRAWAL_STATUS = { PENDING: "PENDING", PROCESSING: "PROCESSING", COMPLETED: "COMPLETED", FAILED: "FAILED", RETURNED: "RETURNED", CANCELLED: "CANCELLED" } as const;
export type WithdrawalStatus = keyof typeof WITHDRAWAL_STATUS;
export const WITHDRAWAL_STATUSES = Object.values(WITHDRAWAL_STATUS);

type Transition = { to: WithdrawalStatus; from: readonly WithdrawalStatus[]; done: string; event: EventType };
/** What each sandbox helper (and, with a real provider, each provider event) may do, and from where. */
const TRANSITIONS = {
  process: { to: "PROCESSING", from: ["PENDING"], done: "processed", event: "withdrawal.processing" },
  complete: { to: "COMPLETED", from: ["PENDING", "PROCESSING"], done: "completed", event: "withdrawal.completed" },
  fail: { to: "FAILED", from: ["PENDING", "PROCESSING"], done: "failed", event: "withdrawal.failed" },
  return: { to: "RETURNED", from: ["COMPLETED"], done: "returned", event: "withdrawal.returned" },
  cancel: { to: "CANCELLED", from: ["PENDING"], done: "cancelled", event: "withdrawal.cancelled" },
} as const satisfies Record<string, Transition>;
type TransitionName = keyof typeof TRANSITIONS;

/**
 * The status changes that take a withdrawal in `status` to the transition's target; COMPLETED from
 * PENDING passes through PROCESSING, as a real payout does. Anything else is a CONFLICT, a repeat of
 * the transition just made included (a retry under the same Idempotency-Key replays the first answer
 * instead; a new request finds the withdrawal already there).
 */
function stepsOf(status: string, name: TransitionName): Transition[] {
  const transition: Transition = TRANSITIONS[name];
  if (name === "complete" && status === WITHDRAWAL_STATUS.PENDING) return [TRANSITIONS.process, transition];
  if (transition.from.includes(status as WithdrawalStatus)) return [transition];
  throw new AppError("CONFLICT", `Withdrawal is ${status}: only a ${transition.from.join(" or ")} withdrawal can be ${transition.done}`);
}

export const WITHDRAWAL_TYPES = ["BANK", "NGN_BANK", "USDC"] as const;
export type WithdrawalType = (typeof WITHDRAWAL_TYPES)[number];
type Selection = Pick<Prisma.WithdrawalFindFirstArgs, "select" | "include">;
type Payout = {
  clientId: string;
  userId: string;
  type: WithdrawalType;
  currency: Currency;
  amount: Decimal;
  developerFee: Decimal;
  /** Ours, on a chain (CHAIN_NETWORK_FEE_…): booked to FEES with the debit; none elsewhere. */
  networkFee?: Decimal;
  destination: Record<string, unknown>;
  metadata: MetadataChanges;
  /** USDC: the network it goes out on in its mode (one on a chain sends it there). */
  chain?: { mode: Mode; network: string };
};

const newReference = () => `wd_${randomBytes(12).toString("hex")}`;
const REFERENCE = /^wd_[0-9a-f]{24}$/;

/** A reference that cannot be one of ours is refused as such (400), before any lookup. */
function checkReference(reference: string): string {
  if (!REFERENCE.test(reference)) throw badInput("reference must be a withdrawal reference: wd_ and 24 hex digits");
  return reference;
}

const sameName = (given: string, actual: string) => given.localeCompare(actual.trim(), undefined, { sensitivity: "accent" }) === 0;

/**
 * Withdrawals: the balance in the withdrawal's own currency is debited (user against PAYOUTS, the
 * developer fee against the client's revenue, and on a chain the network fee against our FEES) at
 * initiation, in the same transaction as the record; a failure reverses all three, a return the
 * amount only, each exactly once.
 * Ledger entries carry the withdrawal's `reference` as their referenceId.
 */
export class WithdrawalService {
  constructor(
    private readonly deps: {
      prisma: PrismaClient;
      users: UserService;
      ledger: LedgerService;
      metrics: Pick<BusinessMetrics, "withdrawals">;
      /** A network's chain id as this deployment runs it in a mode (src/rail/rail.ts). */
      chainIdOf: (mode: Mode, network: string) => number | undefined;
      /** Where a USDC withdrawal on a chain is handed to the chain's sender (and refused first where its mode cannot send). */
      sends: Pick<SendQueue, "queue" | "nudge">;
      /** Which networks money may move on, per mode (src/chain/live.ts). */
      networks: Pick<LiveNetworks, "assertUsable" | "withdrawalRule">;
      /** Where no withdrawal may go (src/chain/destinations.ts). */
      destinations: Pick<Destinations, "assertOutside">;
    },
  ) {}

  /** USD, EUR, MXN or BRL to the user's own bank account (BRL: or Pix key): names and dob must be the user's. */
  async toBank(clientId: string, currencyInput: unknown, input: unknown) {
    const currency = parseBankCurrency(currencyInput);
    const request = parseBankWithdrawal(currency, input);
    const amount = parseAmount(request.amount, currency);
    const developerFee = parseDeveloperFee(request.developerFee, currency);
    const user = await this.deps.users.get(clientId, request.userId);
    assertAccountHolder(user, request);
    const destination = { currency, ...request.destination };
    return this.initiate({ clientId, userId: user.id, type: "BANK", currency, amount, developerFee, destination, metadata: request.metadata });
  }

  async toNgnBank(clientId: string, input: unknown) {
    const request = parseNgnWithdrawal(input);
    const amount = parseAmount(request.amount, "NGN");
    const developerFee = parseDeveloperFee(request.developerFee, "NGN");
    const user = await this.deps.users.get(clientId, request.userId, { select: { id: true } });
    const { accountNumber: account, bankCode, accountName, bankName, narration } = request;
    const destination = { account, bankCode, accountName, bankName, narration };
    return this.initiate({ clientId, userId: user.id, type: "NGN_BANK", currency: "NGN", amount, developerFee, destination, metadata: request.metadata });
  }

  async toUsdc(clientId: string, input: unknown) {
    const mode = await modeOf(this.deps.prisma, clientId);
    const request = parseUsdcWithdrawal(input, (network) => this.deps.chainIdOf(mode, network));
    const amount = parseAmount(request.amount, "USDC");
    const developerFee = parseDeveloperFee(request.developerFee, "USDC");
    this.deps.networks.assertUsable(mode, request.network.name, "USDC", "network");
    const networkFee = this.networkFeeOf(mode, request.network.name, amount);
    await this.deps.destinations.assertOutside(request.walletAddress, "walletAddress");
    const user = await this.deps.users.get(clientId, request.userId, { select: { id: true } });
    const destination = { address: request.walletAddress, network: request.network.name, chainId: request.network.chainId };
    return this.initiate({ clientId, userId: user.id, type: "USDC", currency: "USDC", amount, developerFee, networkFee, destination, metadata: request.metadata, chain: { mode, network: request.network.name } });
  }

  /**
   * On a chain, a withdrawal moves at least the network's minimum and pays its network fee on top (the
   * transfer carries `amount` whole); a simulated network spends no gas: no minimum, no fee.
   */
  private networkFeeOf(mode: Mode, network: string, amount: Decimal): Decimal {
    const rule = this.deps.networks.withdrawalRule(mode, network, "USDC");
    if (!rule) return new Exact(0);
    if (amount.lessThan(rule.min)) throw new AppError("BAD_USER_INPUT", `amount must be at least ${rule.min} USDC on ${network}`, { param: "amount" });
    return new Exact(rule.fee);
  }

  /** Another client's withdrawal is exactly as unknown as one that does not exist. */
  async get(clientId: string, reference: string, query: Selection = {}) {
    const withdrawal = await this.deps.prisma.withdrawal.findFirst({ ...query, where: { reference: checkReference(reference), clientId } });
    if (!withdrawal) throw notFound("Withdrawal");
    return withdrawal;
  }

  /** The payout provider accepted the payout: PENDING → PROCESSING. */
  process(clientId: string, reference: string) {
    return this.move(clientId, reference, "process", {});
  }

  /** The payout arrived: PENDING or PROCESSING → COMPLETED (from PENDING through PROCESSING). */
  complete(clientId: string, reference: string) {
    return this.move(clientId, reference, "complete", {});
  }

  /** The payout failed: PENDING or PROCESSING → FAILED, and the amount and the fee return to the balance. */
  fail(clientId: string, reference: string, reason: string | null | undefined) {
    return this.move(clientId, reference, "fail", { failureReason: reasonOf(reason, "The payout was rejected by the receiving bank") });
  }

  /**
   * The client takes back a withdrawal nothing has been done with yet: PENDING → CANCELLED, amount and fee
   * back, once. On a chain, only while its transfer waits unsigned: the send is withdrawn in the same
   * transaction, conditionally, so of a cancel and the sender's signing exactly one wins; once signed
   * (or handed to the payout provider: PROCESSING) it is a CONFLICT.
   */
  cancel(clientId: string, reference: string) {
    return this.move(clientId, reference, "cancel", {});
  }

  /** The bank sent a completed payout back: COMPLETED → RETURNED, and the amount returns (the developer fee is kept). */
  returnPayout(clientId: string, reference: string, reason: string | null | undefined) {
    return this.move(clientId, reference, "return", { returnReason: reasonOf(reason, "The receiving bank returned the payout") });
  }

  private async initiate(payout: Payout): Promise<Withdrawal> {
    const { clientId, userId, currency, amount, developerFee } = payout;
    const networkFee = payout.networkFee ?? new Exact(0);
    const initiated = await inTransaction(this.deps.prisma, async (tx) => {
      const withdrawal = await tx.withdrawal.create({
        data: {
          reference: newReference(),
          clientId,
          userId,
          type: payout.type,
          currency,
          amount: amount.toFixed(),
          fee: developerFee.plus(networkFee).toFixed(),
          developerFee: developerFee.toFixed(),
          status: WITHDRAWAL_STATUS.PENDING,
          destination: JSON.stringify(payout.destination),
          metadata: newMetadata(payout.metadata),
        },
      });
      // One journal debits the amount, the developer fee and the network fee: the ledger's funds check covers
      // their sum, and refuses (INSUFFICIENT_FUNDS) a balance that cannot pay them all, rolling the record back too.
      await this.deps.ledger.post(prismaSql(tx), {
        clientId,
        type: "WITHDRAWAL",
        referenceId: withdrawal.reference,
        postings: [
          { account: { userId, currency }, amount: amount.negated(), type: "WITHDRAWAL" },
          { account: { system: "PAYOUTS", currency }, amount, type: "WITHDRAWAL" },
          ...developerFeePostings(userId, currency, developerFee),
          ...feePostings(userId, currency, networkFee, "FEES"),
        ],
      });
      await recordEvent(prismaSql(tx), { clientId, userId, type: "withdrawal.created", object: withdrawalObject(withdrawal) });
      // On a live network the transfer is queued with the debit: both commit, or neither.
      const onChain =
        payout.chain !== undefined &&
        (await this.deps.sends.queue(prismaSql(tx), {
          ...payout.chain,
          purpose: "WITHDRAWAL",
          purposeId: withdrawal.reference,
          to: payout.destination.address as `0x${string}`,
          symbol: currency,
          amount: amount.toFixed(),
        }));
      return { withdrawal, onChain };
    });
    if (initiated.onChain) afterCommit(() => this.deps.sends.nudge());
    this.deps.metrics.withdrawals.inc({ type: initiated.withdrawal.type, status: initiated.withdrawal.status });
    return initiated.withdrawal;
  }

  /**
   * The chain's side of a withdrawal sent on a live network, each step in the sender's transaction:
   * broadcast → PROCESSING with its hash (a replacement's broadcast, or the replacement mined, only
   * records the new hash); at the confirmation depth → COMPLETED; refused by the token or reverted
   * on chain → FAILED, and the amount and fee come back (WITHDRAWAL_REVERSAL).
   */
  readonly chainOutcome: SendOutcome = {
    sent: (tx, send, transactionHash) => this.followChain(tx, send.purposeId, "process", { transactionHash }),
    confirmed: (tx, send, transactionHash) => this.followChain(tx, send.purposeId, "complete", { transactionHash }),
    failed: (tx, send, failureReason) => this.followChain(tx, send.purposeId, "fail", { failureReason }),
  };

  private async followChain(tx: Tx, reference: string, name: TransitionName, change: { transactionHash?: string; failureReason?: string }) {
    const [locked] = await prismaSql(tx).query<{ status: string; clientId: string }>("withdrawal_lock_any", LOCK_ANY_WITHDRAWAL, [reference]);
    if (!locked) throw new Error(`withdrawal ${reference} of a chain send not found`);
    const final = locked.status === WITHDRAWAL_STATUS.COMPLETED || locked.status === WITHDRAWAL_STATUS.FAILED;
    if (final || (name === "process" && locked.status !== WITHDRAWAL_STATUS.PENDING)) {
      if (!final && change.transactionHash) await tx.withdrawal.update({ where: { reference }, data: { transactionHash: change.transactionHash } });
      return;
    }
    const { withdrawal, changed } = await this.steps(tx, locked.clientId, reference, locked.status, name, change);
    for (const status of changed) this.deps.metrics.withdrawals.inc({ type: withdrawal.type, status });
  }

  /**
   * One helper's transition. The withdrawal's row is locked first, so of racing helpers one decides and
   * writes while the others wait, then decide on what it left: a CONFLICT unless it allows their own
   * transition (after `process`, `complete` or `fail`). Each status change is its own update and event, and its money moves in the same
   * transaction: a failure reverses the amount and the fee, a return the amount only.
   */
  private async move(clientId: string, reference: string, name: TransitionName, reasons: { failureReason?: string; returnReason?: string }) {
    checkReference(reference);
    const { withdrawal, changed } = await inTransaction(this.deps.prisma, async (tx) => {
      const [locked] = await prismaSql(tx).query<{ status: string; onChain: boolean }>("withdrawal_lock", LOCK_WITHDRAWAL, [reference, clientId]);
      if (!locked) throw notFound("Withdrawal");
      if (name === "cancel") {
        if (locked.onChain && locked.status === WITHDRAWAL_STATUS.PENDING && !(await withdrawQueuedSend(prismaSql(tx), "WITHDRAWAL", reference, "cancelled by the client"))) {
          throw new AppError("CONFLICT", `Withdrawal ${reference} is already signed on its chain and can no longer be cancelled`);
        }
      } else if (locked.onChain) {
        throw new AppError("BAD_USER_INPUT", `Withdrawal ${reference} is sent on a chain: its status follows the chain, not the sandbox`, { param: "reference" });
      }
      return this.steps(tx, clientId, reference, locked.status, name, reasons);
    });
    for (const status of changed) this.deps.metrics.withdrawals.inc({ type: withdrawal.type, status });
    return withdrawal;
  }

  /** The status changes of one transition on a locked withdrawal, each its own update and event, its money in the same transaction. */
  private async steps(tx: Tx, clientId: string, reference: string, status: string, name: TransitionName, change: { failureReason?: string; returnReason?: string; transactionHash?: string }) {
    const { transactionHash, ...reasons } = change;
    const changed: WithdrawalStatus[] = [];
    let withdrawal!: Withdrawal;
    for (const step of stepsOf(status, name)) {
      const data = { status: step.to, ...(transactionHash ? { transactionHash } : {}), ...(step.to === TRANSITIONS[name].to ? reasons : {}) };
      withdrawal = await tx.withdrawal.update({ where: { reference }, data });
      if (step.to === WITHDRAWAL_STATUS.FAILED || step.to === WITHDRAWAL_STATUS.CANCELLED) await this.giveBack(tx, withdrawal, { fees: true });
      if (step.to === WITHDRAWAL_STATUS.RETURNED) await this.giveBack(tx, withdrawal, { fees: false });
      await recordEvent(prismaSql(tx), { clientId, userId: withdrawal.userId, type: step.event, object: withdrawalObject(withdrawal) });
      changed.push(step.to);
    }
    return { withdrawal, changed };
  }

  /**
   * WITHDRAWAL_REVERSAL: the amount back from PAYOUTS and, unless they are kept (a return: the payout was
   * made), the developer fee back from the client's revenue and the network fee back from FEES.
   */
  private giveBack(tx: Tx, withdrawal: Withdrawal, refund: { fees: boolean }) {
    const amount = new Exact(withdrawal.amount.toString());
    const developerFee = new Exact(withdrawal.developerFee.toString());
    const { clientId, userId, currency } = withdrawal;
    const postings: Posting[] = [
      { account: { userId, currency }, amount, type: "WITHDRAWAL_REVERSAL" },
      { account: { system: "PAYOUTS", currency }, amount: amount.negated(), type: "WITHDRAWAL_REVERSAL" },
    ];
    const fees = refund.fees ? ([["CLIENT_REVENUE", developerFee], ["FEES", networkFeeOf(withdrawal)]] as const) : [];
    for (const [system, fee] of fees) {
      if (fee.isZero()) continue;
      postings.push(
        { account: { userId, currency }, amount: fee, type: "WITHDRAWAL_REVERSAL" },
        { account: { system, currency }, amount: fee.negated(), type: "WITHDRAWAL_REVERSAL" },
      );
    }
    return this.deps.ledger.post(prismaSql(tx), { clientId, type: "WITHDRAWAL_REVERSAL", referenceId: withdrawal.reference, postings });
  }
}

/** Locks the client's withdrawal for the rest of the transaction (helpers on it queue here). */
const LOCK_WITHDRAWAL = `
  SELECT w."status", EXISTS (SELECT 1 FROM "chain_sends" s WHERE s."purpose" = 'WITHDRAWAL' AND s."purposeId" = w."reference") AS "onChain"
  FROM "withdrawals" w WHERE w."reference" = $1 AND w."clientId" = $2::uuid FOR UPDATE OF w`;
/** The chain's sender locks a withdrawal by its reference alone (it acts for the platform, not a client). */
const LOCK_ANY_WITHDRAWAL = `SELECT "status", "clientId" FROM "withdrawals" WHERE "reference" = $1 FOR UPDATE`;

function reasonOf(reason: string | null | undefined, fallback: string): string {
  const text = reason?.trim() || fallback;
  if (text.length > 500) throw badInput("reason must be at most 500 characters");
  return text;
}

/** First-party payouts only: the account holder named in the request must be the user. */
function assertAccountHolder(user: User, request: { firstName: string; lastName: string; dob: string }) {
  if (!sameName(request.firstName, user.firstName)) throw badInput("firstName does not match the user's");
  if (!sameName(request.lastName, user.lastName)) throw badInput("lastName does not match the user's");
  if (request.dob !== user.dob.toISOString().slice(0, 10)) throw badInput("dob does not match the user's");
}

/** Our own fee on a withdrawal (the network fee, on a chain): the record's fee less the client's developer fee. */
export function networkFeeOf(withdrawal: Pick<Withdrawal, "fee" | "developerFee">): Decimal {
  return new Exact(withdrawal.fee.toString()).minus(withdrawal.developerFee.toString());
}
