import { mkdirSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "../generated/prisma/client.js";
import type { Logger } from "../logger.js";
import { applyMigrations, type SqlSession } from "./migrate.js";

/**
 * Plain SQL for the few hot reads where Prisma's per-call query planning dominates (see README,
 * Measured): a named prepared statement on PostgreSQL, a direct query on the embedded database.
 */
export type SqlReader = {
  query<Row>(name: string, text: string, values: unknown[]): Promise<Row[]>;
};

export type Database = {
  prisma: PrismaClient;
  sql: SqlReader;
  /** The PostgreSQL pool behind Prisma; absent on the embedded database. */
  pool?: pg.Pool;
  ping(): Promise<boolean>;
  close(): Promise<void>;
};

export type DatabaseOptions = {
  /** A PostgreSQL URL; when absent the embedded PGlite is used. */
  url?: string;
  /** Where the embedded database keeps its files; `memory://` keeps nothing (tests). */
  embeddedDir?: string;
  poolSize?: number;
  logger: Logger;
};

async function openPostgres(url: string, options: DatabaseOptions): Promise<Database> {
  const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 10 });
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
    prisma,
    sql: { query: async <Row>(name: string, text: string, values: unknown[]) => (await pool.query({ name, text, values })).rows as Row[] },
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
  if (dir !== "memory://") mkdirSync(dir, { recursive: true });
  const db = await PGlite.create(dir);
  const session: SqlSession = {
    rows: async (sql, params) => (await db.query<Record<string, unknown>>(sql, params)).rows,
    script: async (sql) => void (await db.exec(sql)),
  };
  await applyMigrations(session, options.logger);
  // The adapter targets an older driver-adapter interface revision; it is runtime-compatible.
  const prisma = new PrismaClient({ adapter: new PrismaPGlite(db) as unknown as PrismaPg });
  return {
    prisma,
    sql: { query: async <Row>(_name: string, text: string, values: unknown[]) => (await db.query<Row>(text, values)).rows },
    ping: () => db.query("SELECT 1").then(() => true, () => false),
    async close() {
      await prisma.$disconnect();
      await db.close();
    },
  };
}

export function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.url ? openPostgres(options.url, options) : openEmbedded(options.embeddedDir ?? "memory://", options);
}

export const embeddedDataDir = (dataDir: string) => join(dataDir, "pgdata");
