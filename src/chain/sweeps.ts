import { randomUUID } from "node:crypto";
import { Decimal } from "decimal.js";
import { erc20Abi, formatEther, getAddress, parseUnits, type Address, type PublicClient } from "viem";
import type { Sql, SqlDatabase } from "../db/sql.js";
import type { Logger } from "../logger.js";
import { queueSend, withdrawQueuedSend, type ChainSend } from "./send-records.js";
import type { SendOutcome } from "./sender.js";
import type { NetworkSettings } from "./networks.js";

/** A failed sweep of an address and token is tried again after this long (a paused token must not queue one per pass). */
const RETRY_FAILED_AFTER = "5 minutes";
/** Why a sweep queued for a deposit that became ORPHANED ended, unsigned (withdrawForOrphans); its address is planned again at once. */
export const WITHDRAWN_FOR_ORPHANS = "withdrawn before it was signed: a deposit it was to move was flagged ORPHANED (its transfer left the chain); the address's other deposits are swept anew";

type Candidate = { address: Address; tokenAddress: Address; amount: string; depositIds: string[] };

const CANDIDATES = `
  SELECT w."address", d."tokenAddress", sum(d."amount")::text AS "amount", array_agg(cd."depositId") AS "depositIds"
  FROM "chain_deposits" cd
  JOIN "deposits" d ON d."id" = cd."depositId"
  JOIN "wallets" w ON w."userId" = d."userId" AND w."clientId" = d."clientId"
  WHERE cd."chainId" = $1::int AND cd."sweepId" IS NULL AND d."status" = 'COMPLETED' AND cd."flag" IS NULL
    AND NOT EXISTS (
      SELECT 1 FROM "chain_sends" s
      WHERE s."chainId" = $1::int AND s."purpose" = 'SWEEP' AND s."fromAddress" = w."address" AND s."tokenAddress" = d."tokenAddress"
        AND (s."status" NOT IN ('CONFIRMED', 'FAILED')
          OR (s."status" = 'FAILED' AND s."failureReason" IS DISTINCT FROM $2 AND s."updatedAt" > now() - interval '${RETRY_FAILED_AFTER}')))
  GROUP BY w."address", d."tokenAddress"
  LIMIT 200`;
const LINK = `UPDATE "chain_deposits" SET "sweepId" = $1::uuid WHERE "depositId" = ANY($2::uuid[]) AND "sweepId" IS NULL`;
const UNLINK = `UPDATE "chain_deposits" SET "sweepId" = NULL WHERE "sweepId" = $1::uuid`;
const QUEUED_SWEEPS_OF = `
  SELECT DISTINCT s."id", s."purposeId" FROM "chain_deposits" cd JOIN "chain_sends" s ON s."id" = cd."sweepId"
  WHERE cd."depositId" = ANY($1::uuid[]) AND s."status" = 'QUEUED'`;
const GAS_SENDS = `SELECT count(*)::int AS "all", count(*) FILTER (WHERE "status" NOT IN ('CONFIRMED', 'FAILED'))::int AS "open" FROM "chain_sends" WHERE "purpose" = 'GAS' AND "purposeId" LIKE $1`;

/**
 * Sweeps: a deposit address's completed deposits of a token move to the treasury once, together,
 * they add up to CHAIN_SWEEP_MIN (smaller amounts wait and add up, so dust does not cost more gas
 * than it is worth). A flagged deposit (ORPHANED: its transfer left the chain) is never swept, and
 * never holds up the sweeps of its address's other deposits. The sweep sends exactly those deposits' amount (a deposit still pending stays
 * on the address until it completes). An address without the native coin for the sweep's gas gets
 * just that from the treasury first. Sweeps are the platform's business: no ledger entry, each
 * recorded as a chain send with its transaction hashes, and each deposit tells which sweep moved it.
 */
export class Sweeps {
  /** Per token contract (EIP-55): the least a sweep moves (sweepThresholds). */
  private readonly thresholds: Map<string, Decimal>;

  constructor(
    private readonly deps: { network: NetworkSettings; client: PublicClient; sql: SqlDatabase; treasury: Address; sweepMin: string; decimalsOf(token: Address): Promise<number>; logger: Logger },
  ) {
    this.thresholds = sweepThresholds(deps.sweepMin, deps.network);
  }

  /** Queues a sweep for every address and token whose completed, unswept deposits reach the token's threshold. */
  async plan(chainId: number): Promise<void> {
    const { client, sql } = this.deps;
    const reaches = (c: Candidate) => {
      const threshold = this.thresholds.get(getAddress(c.tokenAddress));
      return threshold !== undefined && new Decimal(c.amount).gte(threshold);
    };
    const candidates = (await sql.query<Candidate>("chain_sweep_candidates", CANDIDATES, [chainId, WITHDRAWN_FOR_ORPHANS])).filter(reaches);
    if (candidates.length === 0) return;
    const balances = await Promise.all(candidates.map((c) => client.readContract({ address: c.tokenAddress, abi: erc20Abi, functionName: "balanceOf", args: [c.address] })));
    for (const [i, candidate] of candidates.entries()) {
      const units = parseUnits(candidate.amount, await this.deps.decimalsOf(candidate.tokenAddress));
      if (balances[i] < units) {
        this.deps.logger.error({ address: candidate.address, token: candidate.tokenAddress, amount: candidate.amount }, "deposit address holds less than its completed deposits: not swept");
        continue;
      }
      await sql.transaction(async (tx) => {
        const purposeId = randomUUID();
        const id = await queueSend(tx, { chainId, network: this.deps.network.name, purpose: "SWEEP", purposeId, from: candidate.address, to: this.deps.treasury, token: candidate.tokenAddress, amount: candidate.amount });
        await tx.query("chain_sweep_link", LINK, [id, candidate.depositIds]);
      });
    }
  }

  /** The sweep's address lacks `wei` of native coin for its gas: the treasury sends it, once per shortfall. */
  async fundGas(tx: Sql, sweep: ChainSend, wei: bigint): Promise<void> {
    const [{ all, open }] = await tx.query<{ all: number; open: number }>("chain_sweep_gas_sends", GAS_SENDS, [`${sweep.id}:%`]);
    if (open > 0) return;
    await queueSend(tx, { chainId: sweep.chainId, network: sweep.network, purpose: "GAS", purposeId: `${sweep.id}:${all + 1}`, from: this.deps.treasury, to: sweep.fromAddress, token: null, amount: formatEther(wei) });
  }
}

/**
 * The least a sweep of each token of the network moves: CHAIN_SWEEP_MIN, and never less than two of
 * the token's network fees. A sweep is at most two sends (its gas top-up, then the sweep), each bidding
 * at most a tenth of the fee ceiling, and the network fee is set to cover one transfer at that price
 * (docs/chain.md, Destinations, minimums and network fees): so a sweep never costs more than it moves.
 */
export function sweepThresholds(sweepMin: string, network: Pick<NetworkSettings, "tokens" | "withdrawals">): Map<string, Decimal> {
  const thresholds = new Map<string, Decimal>();
  for (const [symbol, contract] of Object.entries(network.tokens) as [keyof NetworkSettings["tokens"], Address | undefined][]) {
    if (contract) thresholds.set(getAddress(contract), Decimal.max(sweepMin, new Decimal(network.withdrawals[symbol].fee).times(2)));
  }
  return thresholds;
}

/**
 * Deposits just flagged ORPHANED, in the flagging transaction: a sweep queued for them and not yet signed
 * would wait for tokens the address no longer holds, and hold up the address's later sweeps. It is
 * withdrawn (FAILED, WITHDRAWN_FOR_ORPHANS: nothing was signed) and its deposits unlinked; the next pass
 * plans the address's other completed deposits anew, without the orphans, against the threshold. A sweep
 * already signed is the chain's: it reverts, fails, and is planned again the same way. Of the withdrawal
 * and the sender's signing, exactly one wins (both are conditional on QUEUED).
 */
export async function withdrawForOrphans(tx: Sql, depositIds: string[]): Promise<void> {
  if (depositIds.length === 0) return;
  for (const sweep of await tx.query<{ id: string; purposeId: string }>("chain_sweeps_queued_of", QUEUED_SWEEPS_OF, [depositIds])) {
    if (await withdrawQueuedSend(tx, "SWEEP", sweep.purposeId, WITHDRAWN_FOR_ORPHANS)) await tx.query("chain_sweep_unlink", UNLINK, [sweep.id]);
  }
}

/** What a sweep's end means: confirmed, nothing more (its deposits name it); failed, its deposits are unswept again and planned later. */
export const sweepOutcome: SendOutcome = {
  sent: () => Promise.resolve(),
  confirmed: () => Promise.resolve(),
  failed: async (tx, send) => {
    await tx.$executeRawUnsafe(UNLINK, send.id);
  },
};

