import type { LedgerAccount, LedgerEntry, PrismaClient } from "../generated/prisma/client.js";
import { Exact } from "../money/amount.js";
import { entryHash } from "./hash.js";
import type { SystemAccount } from "./types.js";

export type ChainReport = { currency: string; entries: number; balance: string; valid: boolean; problems: string[] };
export type LedgerVerification = { valid: boolean; chains: ChainReport[] };

export type HouseChainReport = ChainReport & { code: string; shard: number };
export type HouseBalance = { code: SystemAccount; currency: string; shards: number; balance: string };
/** `problems`: what is wrong beyond single chains (a revenue balance below zero). */
export type HouseVerification = { valid: boolean; chains: HouseChainReport[]; balances: HouseBalance[]; problems: string[] };

/**
 * House accounts that are credit-normal: the client's revenue only receives fees (and gives back those
 * of failed withdrawals), so its balance, the sum of its shards, is never below zero.
 */
const NEVER_NEGATIVE: readonly SystemAccount[] = ["CLIENT_REVENUE"];

/**
 * Recomputes one account's chain from its first entry: contiguous sequence numbers, balanceBefore
 * equal to the previous balanceAfter, balanceAfter = balanceBefore + amount, every hash recomputed
 * from the content and the previous hash, the stored balance and last hash equal to the chain's end.
 * `mayGoNegative`: house accounts carry the other side of user balances, so they are negative.
 */
function verifyChain(account: LedgerAccount & { entries: LedgerEntry[] }, mayGoNegative: boolean): ChainReport {
  const problems: string[] = [];
  let previousHash: string | null = null;
  let running = new Exact(0);
  account.entries.forEach((entry, index) => {
    const at = `entry ${entry.sequence}`;
    if (entry.sequence !== index + 1) problems.push(`${at}: sequence should be ${index + 1}`);
    if (!new Exact(entry.balanceBefore.toString()).equals(running)) problems.push(`${at}: balanceBefore does not continue the chain`);
    const after = new Exact(entry.balanceBefore.toString()).plus(entry.amount.toString());
    if (!after.equals(entry.balanceAfter.toString())) problems.push(`${at}: balanceAfter ≠ balanceBefore + amount`);
    if (!mayGoNegative && after.isNegative()) problems.push(`${at}: balance below zero`);
    if (entry.prevHash !== previousHash) problems.push(`${at}: prevHash does not match the previous entry`);
    if (entryHash(previousHash, { ...entry, amount: entry.amount.toString(), balanceBefore: entry.balanceBefore.toString(), balanceAfter: entry.balanceAfter.toString() }) !== entry.hash) {
      problems.push(`${at}: hash does not match its content`);
    }
    previousHash = entry.hash;
    running = new Exact(entry.balanceAfter.toString());
  });
  if (!running.equals(account.balance.toString())) problems.push("stored balance differs from the end of the chain");
  if (account.lastEntryHash !== previousHash) problems.push("stored last hash differs from the end of the chain");
  return { currency: account.currency, entries: account.entries.length, balance: running.toFixed(), valid: problems.length === 0, problems };
}

const accountsWithEntries = (prisma: PrismaClient, where: { clientId: string; userId: string | null }) =>
  prisma.ledgerAccount.findMany({
    where,
    include: { entries: { orderBy: { sequence: "asc" } } },
    orderBy: [{ code: "asc" }, { currency: "asc" }, { shard: "asc" }],
  });

/**
 * What a user account holds must be what its PENDING card authorizations hold (holds are not entries,
 * so no chain covers them), and never more than its balance.
 */
function checkHeld(account: LedgerAccount, chain: ChainReport, pendingHolds: Map<string, string>) {
  const held = new Exact(account.held.toString());
  const authorized = new Exact(pendingHolds.get(account.currency) ?? 0);
  if (!held.equals(authorized)) chain.problems.push(`held ${held.toFixed()} differs from the pending card authorizations, ${authorized.toFixed()}`);
  if (held.greaterThan(chain.balance)) chain.problems.push("held exceeds the balance");
  chain.valid = chain.problems.length === 0;
}

/** Every chain of the user's balances and what each holds, and every journal the user takes part in balanced per currency. */
export async function verifyUserLedger(prisma: PrismaClient, clientId: string, userId: string): Promise<LedgerVerification> {
  const [accounts, holds] = await Promise.all([
    accountsWithEntries(prisma, { clientId, userId }),
    prisma.cardAuthorization.groupBy({ by: ["currency"], where: { clientId, userId, status: "PENDING" }, _sum: { amount: true } }),
  ]);
  const pendingHolds = new Map(holds.map((sum) => [sum.currency, sum._sum.amount?.toString() ?? "0"]));
  const chains = accounts.map((account) => {
    const chain = verifyChain(account, false);
    checkHeld(account, chain, pendingHolds);
    return chain;
  });
  const unbalanced = await prisma.$queryRaw<{ journalId: string; currency: string }[]>`
    SELECT e."journalId", e."currency" FROM "ledger_entries" e
    WHERE e."journalId" IN (SELECT "journalId" FROM "ledger_entries" WHERE "userId" = ${userId}::uuid AND "clientId" = ${clientId}::uuid)
    GROUP BY e."journalId", e."currency" HAVING SUM(e."amount") <> 0`;
  for (const { journalId, currency } of unbalanced) {
    const chain = chains.find((c) => c.currency === currency);
    const problem = `journal ${journalId} is not balanced in ${currency}`;
    if (chain) {
      chain.problems.push(problem);
      chain.valid = false;
    }
  }
  return { valid: chains.every((c) => c.valid) && unbalanced.length === 0, chains };
}

/**
 * Every shard chain of the client's house (system) accounts, each house balance as the sum of its
 * shards, and the client's revenue (CLIENT_REVENUE) never below zero in any currency.
 */
export async function verifyHouseLedger(prisma: PrismaClient, clientId: string): Promise<HouseVerification> {
  const accounts = await accountsWithEntries(prisma, { clientId, userId: null });
  const chains = accounts.map((account) => ({ ...verifyChain(account, true), code: account.code, shard: account.shard }));
  const balances = new Map<string, HouseBalance>();
  for (const chain of chains) {
    const key = `${chain.code}:${chain.currency}`;
    const house = balances.get(key) ?? { code: chain.code as SystemAccount, currency: chain.currency, shards: 0, balance: "0" };
    balances.set(key, { ...house, shards: house.shards + 1, balance: new Exact(house.balance).plus(chain.balance).toFixed() });
  }
  const problems = [...balances.values()]
    .filter((house) => NEVER_NEGATIVE.includes(house.code) && new Exact(house.balance).isNegative())
    .map((house) => `${house.code} ${house.currency}: balance ${house.balance} is below zero`);
  return { valid: chains.every((c) => c.valid) && problems.length === 0, chains, balances: [...balances.values()], problems };
}
