// A second floor under deposit completions: what the machine itself allows for the same number of
// database round trips, with no API in the way. Each "completion" is the product's shape in plain pg,
// on trivial rows of the bench's own tables: one read, a transaction of BEGIN + 7 statements + COMMIT
// (four inserts, the move, the lock, the write), a NOTIFY heard on a LISTEN connection, then one read
// (the subscriber's read of the event log).
import pg from "pg";
import { Arrivals } from "./arrivals.js";
import { mapConcurrent, range } from "./drive.js";

const SETUP = [
  `CREATE TABLE IF NOT EXISTS "bench_floor_rows" ("id" int PRIMARY KEY, "n" bigint NOT NULL DEFAULT 0)`,
  `CREATE TABLE IF NOT EXISTS "bench_floor_log" ("seq" bigserial PRIMARY KEY, "worker" int NOT NULL, "note" text NOT NULL)`,
  `INSERT INTO "bench_floor_rows" ("id") SELECT g FROM generate_series(0, 999) g ON CONFLICT DO NOTHING`,
];

const q = (db: pg.PoolClient | pg.Pool, name: string, text: string, values: unknown[]) => db.query({ name, text, values });

/** Milliseconds from the first read to the last of each completion, `concurrency` at a time, each worker on its own rows. */
export async function roundTripFloor(databaseUrl: string, options: { count: number; concurrency: number; warmUp: number }): Promise<number[]> {
  const channel = `bench_floor_${process.pid}`;
  const arrivals = new Arrivals();
  const pool = new pg.Pool({ connectionString: databaseUrl, max: options.concurrency });
  const listener = new pg.Client({ connectionString: databaseUrl });
  try {
    for (const statement of SETUP) await pool.query(statement);
    await listener.connect();
    listener.on("notification", (message) => arrivals.arrived(message.payload ?? ""));
    await listener.query(`LISTEN ${channel}`);
    // One statement at a time on the listening connection (as the API's publisher sends its NOTIFYs).
    let notifying: Promise<unknown> = Promise.resolve();
    const notify = (key: string) => (notifying = notifying.then(() => listener.query("SELECT pg_notify($1, $2)", [channel, key])));
    const completion = async (i: number) => {
      const row = (i % options.concurrency) * 10;
      const key = `${i}`;
      const arrival = arrivals.wait(key);
      const start = performance.now();
      await q(pool, "floor_read", `SELECT "id", "n" FROM "bench_floor_rows" WHERE "id" = $1`, [row]);
      const tx = await pool.connect();
      try {
        await tx.query("BEGIN");
        for (const statement of [0, 1, 2, 3]) await q(tx, "floor_log", `INSERT INTO "bench_floor_log" ("worker", "note") VALUES ($1, $2)`, [row, `${key}:${statement}`]);
        await q(tx, "floor_move", `UPDATE "bench_floor_rows" SET "n" = "n" + 1 WHERE "id" = $1 RETURNING *`, [row]);
        const accounts = [row + 2, row + 3, row + 4];
        await q(tx, "floor_lock", `SELECT "id", "n" FROM "bench_floor_rows" WHERE "id" = ANY($1::int[]) ORDER BY "id" FOR UPDATE`, [accounts]);
        await q(tx, "floor_write", `UPDATE "bench_floor_rows" SET "n" = "n" + 1 WHERE "id" = ANY($1::int[])`, [accounts]);
        await tx.query("COMMIT");
      } finally {
        tx.release();
      }
      await notify(key);
      await arrival;
      await q(pool, "floor_last", `SELECT "seq" FROM "bench_floor_log" WHERE "worker" = $1 ORDER BY "seq" DESC LIMIT 1`, [row]);
      return performance.now() - start;
    };
    await mapConcurrent(range(options.warmUp), options.concurrency, completion);
    return await mapConcurrent(range(options.count), options.concurrency, completion);
  } finally {
    await listener.end();
    await pool.end();
  }
}
