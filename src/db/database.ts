import { dirname, join } from "node:path";
import pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "../generated/prisma/client.js";
import type { Logger } from "../logger.js";
import { lockDataDir, type LockHolder } from "./embedded-lock.js";
import { applyMigrations, type SqlSession } from "./migrate.js";
import { makePrivateDir, tightenDataDir } from "./private-dir.js";
import { pgliteSql, poolSql, type SqlDatabase } from "./sql.js";
import { unitAwarePrisma, unitAwareSql } from "./unit-of-work.js";

export type Database = {
  prisma: PrismaClient;
  sql: SqlDatabase;
  /** The PostgreSQL pool behind Prisma; absent on the embedded database. */
  pool?: pg.Pool;
  /** The data directory this process holds (embedded database on disk only). */
  lockedDataDir?: string;
  ping(): Promise<boolean>;
  close(): Promise<void>;
};

export type DatabaseOptions = {
  /** A PostgreSQL URL; when absent the embedded PGlite is used. */
  url?: string;
  /** Where the embedded database keeps its files; `memory://` keeps nothing (tests). */
  embeddedDir?: string;
  /** A dump of an embedded data directory to start from (tests: one migrated database for every file, instead of an initdb each). */
  embeddedSnapshot?: Blob;
  /** What this process is, for the message another one gets when it finds the data directory held. */
  role?: LockHolder["role"];
  poolSize?: number;
  logger: Logger;
};

async function openPostgres(url: string, options: DatabaseOptions): Promise<Database> {
  // A transaction left idle (a stuck caller) is ended by the server after 30 s, as Prisma's
  // interactive transactions were; its connection is then discarded, not reused.
  const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 10, idle_in_transaction_session_timeout: 30_000 });
  pool.on("error", (err) => options.logger.error({ err }, "idle database connection failed"));
  const client = await pool.connect();
  try {
    await applyMigrations(
      { rows: async (sql, params) => (await client.query(sql, params)).rows, script: async (sql) => void (await client.query(sql)) },
      options.logger,
    );
  } finally {
    client.release();
  }
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  return {
    prisma: unitAwarePrisma(prisma),
    sql: unitAwareSql(poolSql(pool)),
    pool,
    ping: () => pool.query("SELECT 1").then(() => true, () => false),
    async close() {
      await prisma.$disconnect();
      await pool.end().catch(() => undefined);
    },
  };
}

/**
 * PGlite in this process, through its Prisma driver adapter. (Its socket server was measured to drop
 * the connection after any SQL error, so the in-process adapter is used instead.)
 */
async function openEmbedded(dir: string, options: DatabaseOptions): Promise<Database> {
  const { PGlite } = await import("@electric-sql/pglite");
  const { PrismaPGlite } = await import("pglite-prisma-adapter");
  const onDisk = dir !== "memory://";
  const dataDir = dirname(dir);
  const lock = onDisk ? await holdDataDir(dir, options) : undefined;
  try {
    const db = await PGlite.create(dir, options.embeddedSnapshot ? { loadDataDir: options.embeddedSnapshot } : {});
    const session: SqlSession = {
      rows: async (sql, params) => (await db.query<Record<string, unknown>>(sql, params)).rows,
      script: async (sql) => void (await db.exec(sql)),
    };
    await applyMigrations(session, options.logger);
    if (onDisk) tightenDataDir(dataDir, dir);
    // The adapter targets an older driver-adapter interface revision; it is runtime-compatible.
    const prisma = new PrismaClient({ adapter: new PrismaPGlite(db) as unknown as PrismaPg });
    return {
      prisma: unitAwarePrisma(prisma),
      lockedDataDir: onDisk ? dataDir : undefined,
      sql: unitAwareSql(pgliteSql(db)),
      ping: () => db.query("SELECT 1").then(() => true, () => false),
      async close() {
        await prisma.$disconnect();
        await db.close();
        if (onDisk) tightenDataDir(dataDir, dir);
        await lock?.release();
      },
    };
  } catch (err) {
    await lock?.release();
    throw err;
  }
}

/**
 * One process at a time on an embedded database: two PGlite instances on one directory would each
 * write without seeing the other. The directory is made private (0700/0600) first: looser modes
 * (left by an older version, or set by hand) are tightened, with a warning.
 */
async function holdDataDir(pgdata: string, options: DatabaseOptions) {
  const dataDir = dirname(pgdata);
  makePrivateDir(pgdata);
  const lock = await lockDataDir(dataDir, options.role ?? "server", (err) => {
    // Another process may be writing now: stopping is the only safe answer.
    options.logger.fatal({ err, dataDir }, "lost the lock on the data directory; stopping");
    process.exit(1);
  });
  const loosened = tightenDataDir(dataDir, pgdata);
  if (loosened) options.logger.warn({ dataDir, loosened }, "the data directory was open to other users: their permissions were removed");
  return lock;
}

export function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.url ? openPostgres(options.url, options) : openEmbedded(options.embeddedDir ?? "memory://", options);
}

export const embeddedDataDir = (dataDir: string) => join(dataDir, "pgdata");
