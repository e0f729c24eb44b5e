import { createHash, randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Logger } from "../logger.js";

const MIGRATIONS_DIR = fileURLToPath(new URL("../../prisma/migrations", import.meta.url));
/** Any constant: every instance takes the same advisory lock, so only one migrates at a time. */
const MIGRATION_LOCK = 72_011_204;

// Prisma's own bookkeeping table, so the Prisma CLI stays compatible where its engine is available.
const CREATE_BOOKKEEPING = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum" VARCHAR(64) NOT NULL,
  "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL,
  "logs" TEXT,
  "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

/** One database connection: rows for parameterised statements, script for multi-statement SQL. */
export type SqlSession = {
  rows(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  script(sql: string): Promise<void>;
};

type Migration = { name: string; sql: string; checksum: string };

export function readMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(`${dir}/${name}/migration.sql`, "utf8");
      return { name, sql, checksum: createHash("sha256").update(sql).digest("hex") };
    });
}

/**
 * Applies pending migrations in name order, each in its own transaction with its bookkeeping row,
 * under an advisory lock so that instances starting together do not race. An applied migration
 * whose file has changed stops start-up: history is never rewritten silently.
 */
export async function applyMigrations(db: SqlSession, logger: Logger, dir = MIGRATIONS_DIR): Promise<string[]> {
  const migrations = readMigrations(dir);
  await db.rows("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK]);
  try {
    await db.script(CREATE_BOOKKEEPING);
    const rows = await db.rows(
      `SELECT migration_name, checksum FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
    );
    const applied = new Map(rows.map((r) => [String(r.migration_name), String(r.checksum)]));
    const newlyApplied: string[] = [];
    for (const migration of migrations) {
      const checksum = applied.get(migration.name);
      if (checksum !== undefined) {
        if (checksum !== migration.checksum) throw new Error(`Migration ${migration.name} was changed after it was applied`);
        continue;
      }
      await db.script("BEGIN");
      try {
        await db.script(migration.sql);
        await db.rows(
          `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, finished_at, applied_steps_count)
           VALUES ($1, $2, $3, now(), 1)`,
          [randomUUID(), migration.checksum, migration.name],
        );
        await db.script("COMMIT");
      } catch (err) {
        await db.script("ROLLBACK");
        throw err;
      }
      newlyApplied.push(migration.name);
      logger.info({ migration: migration.name }, "migration applied");
    }
    return newlyApplied;
  } finally {
    await db.rows("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK]).catch(() => undefined);
  }
}
