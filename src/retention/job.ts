import type { RetentionSettings } from "../config.js";
import type { Sql, SqlDatabase } from "../db/sql.js";
import type { Logger } from "../logger.js";

/** The advisory lock a batch holds: of several instances, one deletes at a time. */
const RETENTION_LOCK = 7_318_204_461;

type Rule = { name: string; age: keyof RetentionSettings["ageMs"]; statement: string };

/** A batch of the table's rows whose `column` is before the cut-off, oldest first, but those `keptWhile` (about `candidate`) holds for. */
const olderThan = (table: string, column: string, keptWhile = "false") =>
  `DELETE FROM "${table}" WHERE "id" IN (
    SELECT candidate."id" FROM "${table}" candidate WHERE candidate."${column}" < $1 AND NOT (${keptWhile}) ORDER BY candidate."${column}" LIMIT $2)`;

/**
 * What is deleted, oldest rows first, each statement one batch ($1 the cut-off, $2 the batch size).
 * Nothing a live object or the ledger refers to goes: an event with a delivery still PENDING stays,
 * as does a quote a conversion names. Ledger rows, deposits, conversions, withdrawals and the
 * providers' webhook events (which keep a deposit from being credited twice) are never deleted.
 * Idempotency records expire at the same age (IdempotencyRecords sets their `expiresAt` from it).
 */
const RULES: Rule[] = [
  { name: "delivery attempts", age: "deliveryAttempts", statement: olderThan("webhook_delivery_attempts", "createdAt") },
  {
    name: "finished deliveries of old events",
    age: "events",
    statement: `DELETE FROM "webhook_deliveries" WHERE "id" IN (
      SELECT delivery."id" FROM "events" event JOIN "webhook_deliveries" delivery ON delivery."eventId" = event."id"
      WHERE event."createdAt" < $1 AND delivery."state" <> 'PENDING' ORDER BY event."createdAt" LIMIT $2)`,
  },
  {
    name: "events",
    age: "events",
    statement: olderThan("events", "createdAt", `EXISTS (SELECT 1 FROM "webhook_deliveries" delivery WHERE delivery."eventId" = candidate."id")`),
  },
  {
    name: "idempotency records",
    age: "idempotency",
    statement: `DELETE FROM "idempotency_records" WHERE ("clientId", "key") IN (
      SELECT "clientId", "key" FROM "idempotency_records" WHERE "createdAt" < $1 ORDER BY "createdAt" LIMIT $2)`,
  },
  {
    name: "expired quotes",
    age: "quotes",
    statement: olderThan("conversion_quotes", "expiresAt", `EXISTS (SELECT 1 FROM "conversions" conversion WHERE conversion."quoteId" = candidate."id")`),
  },
  { name: "sign-in codes", age: "otp", statement: olderThan("otp_codes", "createdAt") },
  { name: "expired sessions", age: "sessions", statement: olderThan("sessions", "expiresAt") },
  { name: "revoked API keys", age: "revokedKeys", statement: olderThan("api_keys", "revokedAt") },
  { name: "expired API keys", age: "revokedKeys", statement: olderThan("api_keys", "expiresAt") },
];

/** Batches one run may take per rule, so that a large backlog is worked off over several runs. */
const MAX_BATCHES_PER_RULE = 100;

/**
 * Deletes rows past their age (RetentionSettings) in small batches, every `intervalMs`. Each batch is
 * a transaction of its own holding an advisory lock, so with several instances one deletes at a
 * time and the others skip their turn; on the embedded database the one process does it.
 */
export class RetentionJob {
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;

  constructor(private readonly deps: { sql: SqlDatabase; settings: RetentionSettings; logger: Logger }) {}

  start() {
    this.timer = setInterval(() => {
      this.running ??= this.runOnce()
        .catch((err) => this.deps.logger.error({ err }, "retention run failed"))
        .finally(() => (this.running = undefined));
    }, this.deps.settings.intervalMs);
    this.timer.unref();
  }

  async stop() {
    clearInterval(this.timer);
    await this.running;
  }

  /** One pass over every rule; returns the rows deleted per rule, or null when another instance holds the lock. */
  async runOnce(now = new Date()): Promise<Record<string, number> | null> {
    const { settings } = this.deps;
    const deleted: Record<string, number> = {};
    for (const rule of RULES) {
      const cutOff = new Date(now.getTime() - settings.ageMs[rule.age]);
      deleted[rule.name] = 0;
      for (let batch = 0; batch < MAX_BATCHES_PER_RULE; batch++) {
        const count = await this.deps.sql.transaction((tx) => this.deleteBatch(tx, rule, cutOff));
        if (count === null) return null;
        deleted[rule.name] += count;
        if (count < settings.batch) break;
      }
    }
    const total = Object.values(deleted).reduce((sum, count) => sum + count, 0);
    if (total) this.deps.logger.info({ deleted }, "retention: old rows deleted");
    return deleted;
  }

  private async deleteBatch(tx: Sql, rule: Rule, cutOff: Date): Promise<number | null> {
    const [{ locked }] = await tx.query<{ locked: boolean }>("retention_lock", "SELECT pg_try_advisory_xact_lock($1) AS locked", [RETENTION_LOCK]);
    if (!locked) return null;
    const name = `retention_${rule.name.replace(/\W+/g, "_")}`;
    const [{ count }] = await tx.query<{ count: number }>(name, `WITH deleted AS (${rule.statement} RETURNING 1) SELECT count(*)::int AS count FROM deleted`, [
      cutOff,
      this.deps.settings.batch,
    ]);
    return count;
  }
}
