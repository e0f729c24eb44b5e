// Journal postings per second through the real ledger code, N workers at once, spread over many
// users (one shared system account) and on one hot user, beside plain pg hot-row transactions.
import { inTransaction } from "../src/db/transaction.js";
import type { PrismaClient } from "../src/generated/prisma/client.js";
import { Exact } from "../src/ledger/amount.js";
import { LedgerService } from "../src/ledger/service.js";
import { createMetrics } from "../src/metrics/metrics.js";
import type { JournalInput } from "../src/ledger/types.js";
import { runWorkers, type Run } from "./drive.js";
import { hotRowTransactions } from "./hot-row-transactions.js";
import { checkLedger } from "./ledger-check.js";
import { markdownTable, ms, percentile, ratio, section } from "./report.js";
import { newClient, newUsers, withDatabase } from "./setup.js";

export type JournalOptions = { databaseUrl: string; workers: number; perWorker: number; poolSize: number };

const AMOUNT = new Exact(1);
const WARM_UP_PER_WORKER = 5;

const depositJournal = (clientId: string, userId: string): JournalInput => ({
  clientId,
  type: "DEPOSIT",
  postings: [
    { account: { userId, currency: "USD" }, amount: AMOUNT, type: "DEPOSIT" },
    { account: { system: "PROVIDER_SETTLEMENT", currency: "USD" }, amount: AMOUNT.negated(), type: "DEPOSIT" },
  ],
});

type Row = { name: string; run: Run; postingsPerTransaction: number };

function table(rows: Row[]): string {
  const perSecond = (run: Run) => run.transactions / run.seconds;
  const baseline = perSecond(rows[0].run);
  return markdownTable(
    ["path", "transactions", "tx/s", "postings/s", "× baseline tx/s", "p50 ms", "p99 ms"],
    rows.map(({ name, run, postingsPerTransaction }) => [
      name,
      run.transactions,
      Math.round(perSecond(run)),
      Math.round(perSecond(run) * postingsPerTransaction),
      ratio(perSecond(run), baseline),
      ms(percentile(run.latencies, 50)),
      ms(percentile(run.latencies, 99)),
    ]),
  );
}

async function runJournals(prisma: PrismaClient, { databaseUrl, workers, perWorker, poolSize }: JournalOptions): Promise<string> {
  const ledger = new LedgerService(prisma, createMetrics().journals);
  const { clientId } = await newClient(prisma);
  const [warmUser, hotUser, ...users] = await newUsers(prisma, clientId, workers + 2);
  const journalsByUser = new Map<string, number>();
  const post = async (userId: string) => {
    await inTransaction(prisma, (tx) => ledger.post(tx, depositJournal(clientId, userId)));
    journalsByUser.set(userId, (journalsByUser.get(userId) ?? 0) + 1);
  };

  await runWorkers(workers, WARM_UP_PER_WORKER, () => post(warmUser));
  const baseline = await hotRowTransactions(databaseUrl, { poolSize, workers, perWorker });
  const spread = await runWorkers(workers, perWorker, (worker) => post(users[worker]));
  const hot = await runWorkers(workers, perWorker, () => post(hotUser));
  const verified = await checkLedger(prisma, ledger, clientId, journalsByUser, AMOUNT);

  return section(
    `Journal postings, ${workers} workers × ${perWorker} journals, pool of ${poolSize} connections`,
    table([
      { name: "baseline: pg transaction, UPDATE one balance row + INSERT one entry", run: baseline, postingsPerTransaction: 1 },
      { name: `ledger.post DEPOSIT journal, ${workers} users (shared system account)`, run: spread, postingsPerTransaction: 2 },
      { name: "ledger.post DEPOSIT journal, one user (hot account)", run: hot, postingsPerTransaction: 2 },
    ]),
    verified,
  );
}

export function benchJournals(options: JournalOptions): Promise<string> {
  return withDatabase(options.databaseUrl, ({ prisma }) => runJournals(prisma, options), options.poolSize);
}
