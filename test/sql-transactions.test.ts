import { Writable } from "node:stream";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { openDatabase } from "../src/db/database.js";
import { createLogger } from "../src/logger.js";
import { testDatabaseUrl } from "./support/server.js";
import { needs, REQUIREMENTS } from "./support/requirements.js";

const quiet = createLogger("silent", new Writable({ write: (_chunk, _encoding, done) => done() }));

describe("plain SQL transactions (PostgreSQL)", needs(REQUIREMENTS.postgres), () => {
  it("fail, and leave the process and the pool working, when their connection dies half-way", async () => {
    const db = await openDatabase({ url: testDatabaseUrl, poolSize: 2, logger: quiet });
    const admin = new pg.Client({ connectionString: testDatabaseUrl });
    await admin.connect();
    try {
      const killed = db.sql.transaction(async (tx) => {
        const [{ pid }] = await tx.query<{ pid: number }>("backend_pid", "SELECT pg_backend_pid() AS pid", []);
        await admin.query("SELECT pg_terminate_backend($1)", [pid]);
        await new Promise((resolve) => setTimeout(resolve, 200)); // the client hears the connection close
        await tx.query("after_kill", "SELECT 1", []);
      });
      await expect(killed).rejects.toThrow();
      const rows = await db.sql.transaction((tx) => tx.query<{ ok: number }>("still_works", "SELECT 1 AS ok", []));
      expect(rows).toEqual([{ ok: 1 }]);
    } finally {
      await admin.end();
      await db.close();
    }
  });
});
