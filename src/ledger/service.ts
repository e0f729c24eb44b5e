import type { Decimal } from "decimal.js";
import type { Prisma, PrismaClient } from "../generated/prisma/client.js";
import type { BusinessMetrics } from "../metrics/metrics.js";
import type { Sql } from "../db/sql.js";
import { pageArgs, parseInput } from "../validation.js";
import { DEPOSIT_STATUS } from "./deposit-types.js";
import { AccountIds } from "./account-ids.js";
import { threeBalances, type ThreeBalances } from "./balances.js";
import { Exact } from "../money/amount.js";
import { postJournals } from "./post.js";
import { HOUSE_SHARDS } from "./shards.js";
import type { HoldChange, JournalInput, SystemAccount } from "./types.js";
import { verifyHouseLedger, verifyUserLedger } from "./verify.js";

const LEDGER_PAGE = pageArgs(1000, 100);
type PageInput = { page?: number | null; limit?: number | null };
/** Ledger lists: page ≥ 1, limit 1–1000 (default 100); anything else is a 400. */
export const ledgerPage = (args: PageInput) => parseInput(LEDGER_PAGE, { page: args.page ?? undefined, limit: args.limit ?? undefined });

/** The order of money record lists (deposits, withdrawals): newest first. */
export const NEWEST_FIRST_RECORDS = [{ createdAt: "desc" as const }, { id: "desc" as const }];

/** One page of a money record list, newest first, as a Prisma relation query. */
export function newestFirstPage(args: PageInput) {
  const { page, limit } = ledgerPage(args);
  return { orderBy: NEWEST_FIRST_RECORDS, skip: (page - 1) * limit, take: limit };
}

/** The entries of a client's users (system accounts stay internal). */
export const clientEntries = (clientId: string) => ({ clientId, userId: { not: null } });

/** Newest first; entries of one journal share createdAt, so the chain position breaks the tie. */
export const NEWEST_FIRST: Prisma.LedgerEntryOrderByWithRelationInput[] = [{ createdAt: "desc" }, { sequence: "desc" }, { id: "desc" }];

/**
 * The double-entry ledger. Writers call `post` inside their own transaction, so a business record
 * and its journal commit together; readers get balances, entries and chain verification.
 * Callers have already checked that the user belongs to the client.
 */
export class LedgerService {
  private readonly accountIds = new AccountIds();

  /** `houseShards`: the benchmark compares the unsharded house account (1) with the default. */
  constructor(
    private readonly prisma: PrismaClient,
    private readonly journals: BusinessMetrics["journals"],
    private readonly houseShards = HOUSE_SHARDS,
  ) {}

  /** One journal; `holds` released (or placed) under the same locks, releases before the journal's debits are checked. */
  async post(tx: Sql, journal: JournalInput, holds: HoldChange[] = []) {
    const [posted] = await this.write(tx, journal.clientId, [journal], holds);
    return posted;
  }

  /** Several journals of one client, in this order, with one lock statement and one write for them all. */
  postAll(tx: Sql, journals: JournalInput[]) {
    return this.write(tx, journals[0].clientId, journals, []);
  }

  /**
   * Places or releases holds on user balances without a journal (holds are not entries). A hold
   * beyond what is available is refused with INSUFFICIENT_FUNDS, as a debit would be.
   */
  async changeHolds(tx: Sql, clientId: string, holds: HoldChange[]) {
    await this.write(tx, clientId, [], holds);
  }

  private async write(tx: Sql, clientId: string, journals: JournalInput[], holds: HoldChange[]) {
    const posted = await postJournals(tx, clientId, journals, holds, this.accountIds, this.houseShards);
    for (const journal of journals) this.journals.inc({ type: journal.type });
    return posted;
  }

  /** The user's balance in one currency; zero when the account has never moved. */
  async balance(clientId: string, userId: string, currency: string): Promise<Decimal> {
    const account = await this.prisma.ledgerAccount.findFirst({ where: { clientId, userId, code: "USER", currency } });
    return new Exact(account?.balance.toString() ?? 0);
  }

  /** The user's three balances (posted, pending, available), one row per currency with an account or a deposit PENDING (or only `currency`'s). */
  async balances(clientId: string, userId: string, currency?: string): Promise<ThreeBalances[]> {
    const [accounts, pending] = await Promise.all([
      this.prisma.ledgerAccount.findMany({ where: { clientId, userId, code: "USER", currency }, select: { currency: true, balance: true, held: true } }),
      this.prisma.deposit.groupBy({ by: ["currency"], where: { clientId, userId, currency, status: DEPOSIT_STATUS.PENDING }, _sum: { amount: true } }),
    ]);
    return threeBalances(accounts, pending.map((sum) => ({ currency: sum.currency, amount: sum._sum.amount ?? 0 })));
  }

  /** A house (system) account's balance: the sum of its shards; zero when it has never moved. */
  async houseBalance(clientId: string, code: SystemAccount, currency: string): Promise<Decimal> {
    const { _sum } = await this.prisma.ledgerAccount.aggregate({ where: { clientId, userId: null, code, currency }, _sum: { balance: true } });
    return new Exact(_sum.balance?.toString() ?? 0);
  }

  /**
   * The client's revenue (the developer fees it charged, less those refunded) per currency it was
   * ever earned in: the sum of the CLIENT_REVENUE shards, currencies in alphabetical order.
   */
  async clientRevenue(clientId: string): Promise<{ currency: string; balance: Decimal }[]> {
    const rows = await this.prisma.ledgerAccount.groupBy({
      by: ["currency"],
      where: { clientId, userId: null, code: "CLIENT_REVENUE" satisfies SystemAccount },
      _sum: { balance: true },
      orderBy: { currency: "asc" },
    });
    return rows.map((row) => ({ currency: row.currency, balance: new Exact(row._sum.balance?.toString() ?? 0) }));
  }

  /** Every user entry of the client, newest first, with paging totals. */
  async clientEntries(clientId: string, args: PageInput) {
    const { page, limit } = ledgerPage(args);
    const where = clientEntries(clientId);
    const [total, transactions] = await Promise.all([
      this.prisma.ledgerEntry.count({ where }),
      this.prisma.ledgerEntry.findMany({ where, orderBy: NEWEST_FIRST, skip: (page - 1) * limit, take: limit }),
    ]);
    return { page, pages: Math.ceil(total / limit), total, transactions };
  }

  verify(clientId: string, userId: string) {
    return verifyUserLedger(this.prisma, clientId, userId);
  }

  verifyHouse(clientId: string) {
    return verifyHouseLedger(this.prisma, clientId);
  }
}
