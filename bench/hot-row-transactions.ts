// The baseline of journal postings: plain pg transactions that each move one balance row and insert
// one entry row, in scratch tables dropped at the end.
import pg from "pg";
import { runWorkers, type Run } from "./drive.js";

export async function hotRowTransactions(databaseUrl: string, options: { poolSize: number; workers: number; perWorker: number }): Promise<Run> {
  const balances = `bench_balances_${process.pid}`;
  const entries = `bench_entries_${process.pid}`;
  const pool = new pg.Pool({ connectionString: databaseUrl, max: options.poolSize });
  try {
    await pool.query(`CREATE TABLE ${balances} ("id" int PRIMARY KEY, "balance" numeric NOT NULL)`);
    await pool.query(
      `CREATE TABLE ${entries} ("id" bigserial PRIMARY KEY, "balanceId" int NOT NULL, "amount" numeric NOT NULL, "balanceAfter" numeric NOT NULL, "createdAt" timestamptz NOT NULL DEFAULT now())`,
    );
    await pool.query(`INSERT INTO ${balances} VALUES (1, 0)`);
    const run = await runWorkers(options.workers, options.perWorker, async () => {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const { rows } = await client.query(`UPDATE ${balances} SET "balance" = "balance" + $1 WHERE "id" = 1 RETURNING "balance"`, ["1"]);
        await client.query(`INSERT INTO ${entries} ("balanceId", "amount", "balanceAfter") VALUES (1, $1, $2)`, ["1", rows[0].balance]);
        await client.query("COMMIT");
      } catch (err) {
        await client.query("ROLLBACK");
        throw err;
      } finally {
        client.release();
      }
    });
    const { rows } = await pool.query(`SELECT "balance"::int AS "balance" FROM ${balances} WHERE "id" = 1`);
    if (rows[0].balance !== run.transactions) throw new Error(`baseline balance ${rows[0].balance} ≠ ${run.transactions} transactions`);
    return run;
  } finally {
    await pool.query(`DROP TABLE IF EXISTS ${balances}, ${entries}`);
    await pool.end();
  }
}
