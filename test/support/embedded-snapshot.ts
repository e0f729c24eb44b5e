import { mkdtempSync, openAsBlob, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { inject } from "vitest";
import type { TestProject } from "vitest/node";
import { applyMigrations } from "../../src/db/migrate.js";
import { createLogger } from "../../src/logger.js";
import { testDatabaseUrl } from "./test-database.js";

declare module "vitest" {
  interface ProvidedContext {
    /** A dump of a migrated embedded database, written once per run (absent on PostgreSQL). */
    embeddedSnapshot?: string;
  }
}

/**
 * Global setup: creating an embedded database (its initdb) costs seconds, every file starts at least
 * one, and all of them start from the same migrated schema. So the run creates and migrates one, and
 * each test server starts from its dump (the server still runs its migrations: none is pending).
 */
export default async function setup(project: TestProject) {
  if (testDatabaseUrl) return;
  const db = await PGlite.create("memory://");
  try {
    await applyMigrations(
      { rows: async (sql, params) => (await db.query<Record<string, unknown>>(sql, params)).rows, script: async (sql) => void (await db.exec(sql)) },
      createLogger("silent"),
    );
    const dir = mkdtempSync(join(tmpdir(), "fintech-snapshot-"));
    const file = join(dir, "pgdata.tar");
    writeFileSync(file, Buffer.from(await (await db.dumpDataDir("none")).arrayBuffer()));
    project.provide("embeddedSnapshot", file);
    return () => rmSync(dir, { recursive: true, force: true });
  } finally {
    await db.close();
  }
}

/** The migrated database to start a test server's embedded database from, when the run made one. */
export async function embeddedSnapshot(): Promise<Blob | undefined> {
  const file = inject("embeddedSnapshot");
  return file ? openAsBlob(file) : undefined;
}
