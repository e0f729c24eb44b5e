import { mkdirSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "../generated/prisma/client.js";
import type { Logger } from "../logger.js";
import { applyMigrations } from "./migrate.js";

export type Prisma = PrismaClient;

export type Database = {
  prisma: PrismaClient;
  /** The same pool Prisma uses, for the few raw statements (migrations, advisory locks). */
  pool: pg.Pool;
  /** Where the database listens; with the embedded default, a loopback port of this process. */
  connectionString: string;
  /** True when running on the embedded PGlite, which takes one connection at a time. */
  embedded: boolean;
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

async function startEmbedded(dir: string) {
  const { PGlite } = await import("@electric-sql/pglite");
  const { PGLiteSocketServer } = await import("@electric-sql/pglite-socket");
  if (dir !== "memory://") mkdirSync(dir, { recursive: true });
  const db = await PGlite.create(dir);
  const server = new PGLiteSocketServer({ db, port: 0, host: "127.0.0.1" });
  await server.start();
  const address = server.getServerConn();
  return {
    connectionString: `postgresql://postgres@${address}/postgres`,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const embedded = options.url ? undefined : await startEmbedded(options.embeddedDir ?? "memory://");
  const connectionString = options.url ?? embedded!.connectionString;
  const pool = new pg.Pool({
    connectionString,
    // PGlite serves one connection at a time: everything queues on a single one.
    max: embedded ? 1 : (options.poolSize ?? 10),
  });
  pool.on("error", (err) => options.logger.error({ err }, "idle database connection failed"));
  try {
    await applyMigrations(pool, options.logger);
  } catch (err) {
    await pool.end();
    await embedded?.stop();
    throw err;
  }
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  return {
    prisma,
    pool,
    connectionString,
    embedded: Boolean(embedded),
    async close() {
      await prisma.$disconnect();
      await pool.end().catch(() => undefined);
      await embedded?.stop();
    },
  };
}

export const embeddedDataDir = (dataDir: string) => join(dataDir, "pgdata");
