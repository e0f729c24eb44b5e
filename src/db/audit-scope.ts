import { AsyncLocalStorage } from "node:async_hooks";
import { ERROR_CODES, type ErrorCode } from "../errors.js";
import type { Sql } from "./sql.js";

/** Who may appear as an actor: a key or a session (JWT), by id only. */
export type ActorType = "api_key" | "session";
export type AuditOutcome = "succeeded" | "refused" | "failed";

/**
 * `refused`: the operation was turned down for what the caller sent or may do (every 4xx code:
 * FORBIDDEN, BAD_USER_INPUT, NOT_FOUND, CONFLICT, INSUFFICIENT_FUNDS, RATE_LIMITED, …);
 * `failed`: it could not be carried out (every 5xx: PROVIDER_ERROR, INTERNAL, SERVICE_UNAVAILABLE).
 */
export const outcomeOf = (code: ErrorCode): AuditOutcome => (ERROR_CODES[code] >= 500 ? "failed" : "refused");

/** One mutation root field as the audit log records it (never a secret: ids and names only). */
export type AuditEntry = {
  id: string;
  clientId: string;
  actorType: ActorType;
  actorId: string;
  operation: string;
  requestId: string;
  /** A parsed IP address only (what a trusted proxy's X-Forwarded-For said may be any text): null otherwise. */
  ip: string | null;
  targetIds: Set<string>;
};

/**
 * A running mutation field: its entry, while it runs (`open`), how many targets the entry had when
 * a transaction of the field last wrote it (undefined: none has), and whether it found nothing to change.
 */
export type AuditScope = { entry: AuditEntry; open: boolean; writtenTargets?: number; unchanged?: true };

const scopes = new AsyncLocalStorage<AuditScope>();

export const runAudited = <T>(scope: AuditScope, work: () => T): T => scopes.run(scope, work);

/** The ids a result names: its own `id` (services return the record they created or changed). */
function idsOf(value: unknown): string[] {
  const id = value && typeof value === "object" ? (value as { id?: unknown }).id : undefined;
  return typeof id === "string" ? [id] : [];
}

const UPSERT = `INSERT INTO "audit_log" ("id", "clientId", "actorType", "actorId", "operation", "targetIds", "requestId", "ip", "outcome")
  VALUES ($1::uuid, $2::uuid, $3, $4::uuid, $5, $6::text[], $7, $8, $9)
  ON CONFLICT ("id") DO UPDATE SET "targetIds" = EXCLUDED."targetIds", "outcome" = EXCLUDED."outcome"`;

/** Writes (or rewrites) an entry with its outcome, on the given connection or transaction. */
export async function writeEntry(sql: Sql, entry: AuditEntry, outcome: AuditOutcome): Promise<void> {
  const targets = outcome === "succeeded" || outcome === "failed" ? [...entry.targetIds] : [];
  await sql.query("audit_log_upsert", UPSERT, [entry.id, entry.clientId, entry.actorType, entry.actorId, entry.operation, targets, entry.requestId, entry.ip, outcome]);
}

/**
 * Called by every transaction the application opens (src/db/unit-of-work.ts), just before it commits:
 * inside a mutation field, the field's entry is written in that transaction, as `succeeded` with the
 * ids the transaction returns. So an effect and its audit entry commit together or not at all, for
 * every mutation, without the mutation doing anything. Outside a mutation field it does nothing.
 */
export async function auditInTransaction(sql: Sql, result: unknown): Promise<void> {
  const scope = scopes.getStore();
  if (!scope?.open) return;
  addResultTargets(scope, result);
  await writeEntry(sql, scope.entry, "succeeded");
  scope.writtenTargets = scope.entry.targetIds.size;
}

export const isAuditing = () => !!scopes.getStore()?.open;

/** The running mutation field also changed `id`, which its result does not name (a rolled key, beside its successor). */
export function auditTarget(id: string): void {
  const scope = scopes.getStore();
  if (scope?.open) scope.entry.targetIds.add(id);
}

/** The running mutation field succeeds without changing anything (revoking a revoked key): its entry names no target. */
export function auditUnchanged(): void {
  const scope = scopes.getStore();
  if (scope?.open) scope.unchanged = true;
}

/** Adds the ids a field's result names to its entry, unless the field changed nothing. */
export function addResultTargets(scope: AuditScope, result: unknown): void {
  if (!scope.unchanged) for (const id of idsOf(result)) scope.entry.targetIds.add(id);
}

/** What a mutation field ran as, kept on its operation's context until the pipeline writes the outcome. */
export type FieldRun = { scope: AuditScope; outcome: AuditOutcome };

/** Whether the field's own transaction already wrote all there is to say: it succeeded, with no target found since. */
export const alreadyWritten = ({ scope, outcome }: FieldRun) => outcome === "succeeded" && scope.writtenTargets === scope.entry.targetIds.size;
const RUNS = Symbol("auditedFieldRuns");
type WithRuns = { [RUNS]?: Map<string, FieldRun> };

/** The mutation fields an operation ran, by response key (alias or name). */
export function fieldRuns(context: object): Map<string, FieldRun> {
  const holder = context as WithRuns;
  holder[RUNS] ??= new Map();
  return holder[RUNS];
}
