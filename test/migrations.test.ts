import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { applyMigrations, readMigrations, type SqlSession } from "../src/db/migrate.js";
import { createLogger } from "../src/logger.js";
import { testDatabaseUrl } from "./support/server.js";
import { needs, REQUIREMENTS } from "./support/requirements.js";

const logger = createLogger("silent");
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

function migrationsDir(migrations: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "fintech-migrations-"));
  for (const [name, sql] of Object.entries(migrations)) writeMigration(dir, name, sql);
  return dir;
}

function writeMigration(dir: string, name: string, sql: string) {
  mkdirSync(join(dir, name), { recursive: true });
  writeFileSync(join(dir, name, "migration.sql"), sql);
}

// One embedded database for the file (it is slow to create); each test migrates its own schema.
let embedded: PGlite | undefined;
afterAll(() => embedded?.close());

const freshSchemaName = () => `migrations_test_${crypto.randomUUID().replaceAll("-", "")}`;

async function embeddedSession(): Promise<SqlSession> {
  embedded ??= await PGlite.create();
  const db = embedded;
  const schema = freshSchemaName();
  await db.exec(`CREATE SCHEMA ${schema}; SET search_path TO ${schema}`);
  return {
    rows: async (sql, params) => (await db.query<Record<string, unknown>>(sql, params)).rows,
    script: async (sql) => void (await db.exec(sql)),
  };
}

const applied = async (session: SqlSession) =>
  session.rows(`SELECT migration_name, checksum, finished_at FROM "_prisma_migrations" ORDER BY migration_name`);

// Written out of order on purpose: the second needs the first's table, so only name order works.
const FIRST = `CREATE TABLE things (id INT PRIMARY KEY);`;
const SECOND = `ALTER TABLE things ADD COLUMN label TEXT NOT NULL DEFAULT 'x';`;
const twoMigrations = () => migrationsDir({ "20260102000000_second": SECOND, "20260101000000_first": FIRST });

describe("applyMigrations", () => {
  it("applies migrations in name order and records each in _prisma_migrations with its checksum", async () => {
    const session = await embeddedSession();
    const names = await applyMigrations(session, logger, twoMigrations());
    expect(names).toEqual(["20260101000000_first", "20260102000000_second"]);
    const rows = await applied(session);
    expect(rows.map((r) => r.migration_name)).toEqual(names);
    expect(rows[0].checksum).toBe(createHash("sha256").update(FIRST).digest("hex"));
    expect(rows.every((r) => r.finished_at !== null)).toBe(true);
    await session.rows(`INSERT INTO things (id, label) VALUES (1, 'a')`);
  });

  it("does nothing the second time, and applies only what is new later", async () => {
    const session = await embeddedSession();
    const dir = twoMigrations();
    await applyMigrations(session, logger, dir);
    expect(await applyMigrations(session, logger, dir)).toEqual([]);
    expect(await applied(session)).toHaveLength(2);
    writeMigration(dir, "20260103000000_third", `CREATE INDEX things_label ON things (label);`);
    expect(await applyMigrations(session, logger, dir)).toEqual(["20260103000000_third"]);
  });

  it("refuses to start when an applied migration has changed, and applies nothing after it", async () => {
    const session = await embeddedSession();
    const dir = migrationsDir({ "20260101000000_first": FIRST });
    await applyMigrations(session, logger, dir);
    writeMigration(dir, "20260101000000_first", `${FIRST}\n-- edited`);
    writeMigration(dir, "20260102000000_second", SECOND);
    await expect(applyMigrations(session, logger, dir)).rejects.toThrow(/20260101000000_first.*changed/);
    expect(await applied(session)).toHaveLength(1);
  });

  it("rolls a failing migration back whole and does not record it", async () => {
    const session = await embeddedSession();
    const dir = migrationsDir({
      "20260101000000_first": FIRST,
      "20260102000000_broken": `CREATE TABLE half_done (id INT); SELECT no_such_function();`,
    });
    await expect(applyMigrations(session, logger, dir)).rejects.toThrow();
    expect((await applied(session)).map((r) => r.migration_name)).toEqual(["20260101000000_first"]);
    expect(await session.rows(`SELECT to_regclass('half_done')::text AS t`)).toEqual([{ t: null }]);
  });
});

describe("applyMigrations on PostgreSQL", () => {
  it("applies each migration once when two instances start together", needs(REQUIREMENTS.postgres), async () => {
    const schema = freshSchemaName();
    const connect = async (): Promise<SqlSession> => {
      const client = new pg.Client({ connectionString: testDatabaseUrl });
      await client.connect();
      cleanups.push(() => client.end());
      await client.query(`SET search_path TO ${schema}`);
      return { rows: async (sql, params) => (await client.query(sql, params)).rows, script: async (sql) => void (await client.query(sql)) };
    };
    const admin = new pg.Client({ connectionString: testDatabaseUrl });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    cleanups.unshift(async () => {
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    });
    const dir = migrationsDir({
      "20260101000000_first": `${FIRST} SELECT pg_sleep(0.2);`,
      "20260102000000_second": SECOND,
    });
    const [one, two] = [await connect(), await connect()];
    const results = await Promise.all([applyMigrations(one, logger, dir), applyMigrations(two, logger, dir)]);
    expect(results.flat().sort()).toEqual(["20260101000000_first", "20260102000000_second"]);
    expect(results.some((names) => names.length === 0)).toBe(true);
    expect(await applied(one)).toHaveLength(2);
  });
});

describe("the house account shards migration", () => {
  it("keeps an existing system account, chain and all, as shard 0 of its house account", async () => {
    const session = await embeddedSession();
    const [init] = readMigrations();
    await applyMigrations(session, logger, migrationsDir({ [init.name]: init.sql }));
    const clientId = crypto.randomUUID();
    await session.rows(
      `INSERT INTO ledger_accounts (id, "clientId", "userId", code, currency, balance, "entryCount", "lastEntryHash")
       VALUES ($1, $2, NULL, 'PROVIDER_SETTLEMENT', 'USD', -25, 3, 'last-hash')`,
      [crypto.randomUUID(), clientId],
    );

    expect(await applyMigrations(session, logger)).toEqual(readMigrations().slice(1).map((m) => m.name));

    expect(await session.rows(`SELECT code, shard, balance::text AS balance, "entryCount", "lastEntryHash" FROM ledger_accounts`)).toEqual([
      { code: "PROVIDER_SETTLEMENT", shard: 0, balance: "-25.000000000000000000", entryCount: 3, lastEntryHash: "last-hash" },
    ]);
    const insert = (shard: number, code = "PROVIDER_SETTLEMENT") =>
      session.rows(`INSERT INTO ledger_accounts (id, "clientId", code, currency, shard) VALUES ($1, $2, $3, 'USD', $4)`, [crypto.randomUUID(), clientId, code, shard]);
    await expect(insert(0)).rejects.toThrow(); // still one account per (client, code, currency, shard), NULL user or not
    await insert(1);
    await expect(insert(1, "USER")).rejects.toThrow(); // user balances are never sharded
  });
});
