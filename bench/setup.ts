import { randomBytes } from "node:crypto";
import pg from "pg";
import { createClientWithKey } from "../src/keys/first-key.js";
import { openDatabase, type Database } from "../src/db/database.js";
import type { PrismaClient } from "../src/generated/prisma/client.js";
import { ApiKeyService } from "../src/keys/service.js";
import { createLogger } from "../src/logger.js";

export async function ensureDatabase(url: string) {
  const name = new URL(url).pathname.slice(1);
  const admin = new pg.Client({ connectionString: Object.assign(new URL(url), { pathname: "/postgres" }).toString() });
  await admin.connect();
  try {
    const exists = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (!exists.rowCount) await admin.query(`CREATE DATABASE "${name.replace(/"/g, "")}"`);
  } finally {
    await admin.end();
  }
}

/** Opens the database (applying migrations) for the length of `work`. */
export async function withDatabase<T>(url: string, work: (db: Database) => Promise<T>, poolSize?: number): Promise<T> {
  const db = await openDatabase({ url, poolSize, logger: createLogger("warn") });
  try {
    return await work(db);
  } finally {
    await db.close();
  }
}

const tag = () => randomBytes(4).toString("hex");

/**
 * A fresh tenant with an API key, so runs never see each other's rows. `live`: what production
 * callers use (a production server without SANDBOX refuses test keys); `test` for the sandbox parts.
 */
export async function newClient(prisma: PrismaClient, mode: "test" | "live") {
  const { apiKey, client } = await createClientWithKey(prisma, new ApiKeyService(prisma), { email: `bench-${tag()}@example.com`, mode });
  return { apiKey: apiKey.key, clientId: client.id };
}

export async function newUsers(prisma: PrismaClient, clientId: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const user = await prisma.user.create({
      data: { clientId, email: `user-${tag()}@example.com`, firstName: "Bench", lastName: "User", phoneNumber: "+14155552671", dob: new Date("1990-01-01") },
    });
    ids.push(user.id);
  }
  return ids;
}
