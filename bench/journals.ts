// Journal postings per second through the real ledger code, N workers at once, spread over many
// users (with the house account unsharded, as before, and in shards) and on one hot user, beside
// plain pg hot-row transactions.
import type { Database } from "../src/db/database.js";
import { Exact } from "../src/money/amount.js";
import { LedgerService } from "../src/ledger/service.js";
import { HOUSE_SHARDS } from "../src/ledger/shards.js";
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
const ROUNDS = 4;

const combined = (runs: Run[]): Run => ({
  transactions: runs.reduce((sum, run) => sum + run.transactions, 0),
  seconds: runs.reduce((sum, run) => sum + run.seconds, 0),
  cpuSeconds: runs.reduce((sum, run) => sum + run.cpuSeconds, 0),
  latencies: runs.flatMap((run) => run.latencies),
});

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
    ["path", "transactions", "tx/s", "postings/s", "× baseline tx/s", "p50 ms", "p99 ms", "poster CPU ms/tx"],
    rows.map(({ name, run, postingsPerTransaction }) => [
      name,
      run.transactions,
      Math.round(perSecond(run)),
      Math.round(perSecond(run) * postingsPerTransaction),
      ratio(perSecond(run), baseline),
      ms(percentile(run.latencies, 50)),
      ms(percentile(run.latencies, 99)),
      ((run.cpuSeconds * 1000) / run.transactions).toFixed(2),
    ]),
  );
}

/** A fresh client whose users post DEPOSIT journals through `ledger`, counted per user for the check afterwards. */
async function journalClient({ prisma, sql }: Database, ledger: LedgerService, users: number) {
  const { clientId } = await newClient(prisma, "test");
  const userIds = await newUsers(prisma, clientId, users);
  const journalsByUser = new Map<string, number>();
  const post = async (userId: string) => {
    await sql.transaction((tx) => ledger.post(tx, depositJournal(clientId, userId)));
    journalsByUser.set(userId, (journalsByUser.get(userId) ?? 0) + 1);
  };
  return { userIds, post, check: () => checkLedger(ledger, clientId, journalsByUser, AMOUNT) };
}

async function runJournals(db: Database, { databaseUrl, workers, perWorker, poolSize }: JournalOptions): Promise<string> {
  // The house account as it was (one shard: every journal of the client waits on it), and as it is.
  const { journals } = createMetrics();
  const unsharded = await journalClient(db, new LedgerService(db.prisma, journals, 1), workers);
  const sharded = await journalClient(db, new LedgerService(db.prisma, journals), workers + 1);
  const [hotUser, ...users] = sharded.userIds;

  await runWorkers(workers, WARM_UP_PER_WORKER, (worker) => unsharded.post(unsharded.userIds[worker]));
  await runWorkers(workers, WARM_UP_PER_WORKER, (worker) => sharded.post(sharded.userIds[worker]));
  // The paths take turns, round after round, so that a burst of load from elsewhere falls on all of them.
  const paths = [
    (n: number) => hotRowTransactions(databaseUrl, { poolSize, workers, perWorker: n }),
    (n: number) => runWorkers(workers, n, (worker) => unsharded.post(unsharded.userIds[worker])),
    (n: number) => runWorkers(workers, n, (worker) => sharded.post(users[worker])),
    (n: number) => runWorkers(workers, n, () => sharded.post(hotUser)),
  ];
  const runs: Run[][] = paths.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, path] of paths.entries()) runs[i].push(await path(Math.ceil(perWorker / ROUNDS)));
  }
  const [baseline, oneShard, spread, hot] = runs.map(combined);
  const verified = [await unsharded.check(), await sharded.check()].join("\n");

  return section(
    `Journal postings, ${workers} workers × ${perWorker} journals per path (in ${ROUNDS} alternating rounds), pool of ${poolSize} connections`,
    table([
      { name: "baseline: pg transaction, UPDATE one balance row + INSERT one entry", run: baseline, postingsPerTransaction: 1 },
      { name: `ledger.post DEPOSIT journal, ${workers} users, one house account (as before the shards)`, run: oneShard, postingsPerTransaction: 2 },
      { name: `ledger.post DEPOSIT journal, ${workers} users, house account in ${HOUSE_SHARDS} shards`, run: spread, postingsPerTransaction: 2 },
      { name: "ledger.post DEPOSIT journal, one user (hot account)", run: hot, postingsPerTransaction: 2 },
    ]),
    `poster CPU: the CPU time of the process posting the journals (the ledger code on pg here; pg alone for the baseline), per transaction.\n${verified}`,
  );
}

export function benchJournals(options: JournalOptions): Promise<string> {
  return withDatabase(options.databaseUrl, (db) => runJournals(db, options), options.poolSize);
}
