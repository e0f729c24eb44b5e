import type pg from "pg";
import type { Tx } from "./transaction.js";

/**
 * Plain SQL on one connection, for the hot paths where Prisma's per-call cost dominates (see README,
 * Measured). `name` identifies the text: on PostgreSQL the statement is prepared once per connection
 * under it, so one name must always go with one text.
 */
export type Sql = {
  query<Row>(name: string, text: string, values: unknown[]): Promise<Row[]>;
};

/** Plain SQL outside a transaction, and plain SQL transactions (the ledger's and the deposit webhooks'). */
export type SqlDatabase = Sql & {
  /** BEGIN … COMMIT around `work` on one connection (ROLLBACK when it throws). */
  transaction<T>(work: (tx: Sql) => Promise<T>): Promise<T>;
};

const prismaSqls = new WeakMap<Tx, Sql>();

/**
 * A Prisma interactive transaction as Sql, so that writers whose transaction Prisma runs use the same
 * statements. One wrapper per transaction: the ledger knows a transaction by its Sql object.
 */
export function prismaSql(tx: Tx): Sql {
  let sql = prismaSqls.get(tx);
  if (!sql) {
    sql = { query: <Row>(_name: string, text: string, values: unknown[]) => tx.$queryRawUnsafe<Row[]>(text, ...values) };
    prismaSqls.set(tx, sql);
  }
  return sql;
}

const onClient = (client: pg.PoolClient): Sql => ({
  query: async <Row>(name: string, text: string, values: unknown[]) => (await client.query({ name, text, values })).rows as Row[],
});

/** PostgreSQL: named prepared statements on the pool; a transaction holds one pooled connection. */
export function poolSql(pool: pg.Pool): SqlDatabase {
  return {
    query: async <Row>(name: string, text: string, values: unknown[]) => (await pool.query({ name, text, values })).rows as Row[],
    async transaction<T>(work: (tx: Sql) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      let broken: Error | undefined;
      // A checked-out client has no pool listener: without this, a connection that dies mid-transaction
      // (a restart, a failover, a killed backend) raises an unhandled 'error' and ends the process.
      const onError = (err: Error) => (broken = err);
      client.on("error", onError);
      try {
        await client.query("BEGIN");
        const result = await work(onClient(client));
        await client.query("COMMIT");
        return result;
      } catch (err) {
        // A connection that cannot even roll back is discarded rather than returned to the pool.
        await client.query("ROLLBACK").catch((rollbackError: Error) => (broken = rollbackError));
        throw err;
      } finally {
        client.removeListener("error", onError);
        client.release(broken);
      }
    },
  };
}

type PGliteQueries = { query<Row>(text: string, values: unknown[]): Promise<{ rows: Row[] }> };
type PGliteLike = PGliteQueries & { transaction<T>(work: (tx: PGliteQueries) => Promise<T>): Promise<T> };

const onPGlite = (db: PGliteQueries): Sql => ({
  query: async <Row>(_name: string, text: string, values: unknown[]) => (await db.query<Row>(text, values)).rows,
});

/**
 * The embedded database: one session, whose `transaction()` queues behind (and ahead of) Prisma's
 * own transactions there, so the two never interleave. Inside `work`, only `tx` may be used: any
 * other query on the embedded database would wait for this transaction to end.
 */
export function pgliteSql(db: PGliteLike): SqlDatabase {
  return { ...onPGlite(db), transaction: (work) => db.transaction((tx) => work(onPGlite(tx))) };
}
