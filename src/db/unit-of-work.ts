import { AsyncLocalStorage } from "node:async_hooks";
import { auditInTransaction, isAuditing } from "./audit-scope.js";
import type { PrismaClient } from "../generated/prisma/client.js";
import { prismaSql, type Sql, type SqlDatabase } from "./sql.js";
import { TRANSACTION_WAITS, type Tx } from "./transaction.js";

/**
 * A unit of work: one database transaction around everything a piece of code does, including the
 * transactions it opens itself. Inside a unit, the unit-aware Prisma client and Sql route every
 * query to the unit's transaction, and a nested transaction becomes a savepoint (so a nested failure
 * still undoes only its own writes). A keyed mutation runs as a unit, so its effects and its stored
 * answer commit together or not at all (see src/pipeline/idempotency.ts).
 */
type Unit = { tx: Tx; sql: Sql; open: boolean; savepoints: number; afterCommit: (() => void)[] };

const units = new AsyncLocalStorage<Unit>();

/** The unit the caller runs in, while it is still open (work it left running after the end uses the database directly). */
const currentUnit = (): Unit | undefined => {
  const unit = units.getStore();
  return unit?.open ? unit : undefined;
};

/**
 * Runs `work` as one transaction and commits it; `afterCommit` callbacks registered meanwhile (bus
 * publications) run once it has committed, and never when it did not.
 */
export async function runAsUnit<T>(prisma: PrismaClient, work: (sql: Sql) => Promise<T>): Promise<T> {
  let unit: Unit | undefined;
  try {
    const result = await prisma.$transaction(async (tx) => {
      unit = { tx, sql: prismaSql(tx), open: true, savepoints: 0, afterCommit: [] };
      return units.run(unit, () => audited(unit!.sql, () => work(unit!.sql)));
    }, TRANSACTION_WAITS);
    for (const callback of unit!.afterCommit) callback();
    return result;
  } finally {
    if (unit) unit.open = false;
  }
}

/** Runs `callback` after the caller's unit commits (not at all if it rolls back), or at once outside a unit. */
export function afterCommit(callback: () => void): void {
  const unit = currentUnit();
  if (unit) unit.afterCommit.push(callback);
  else callback();
}

/** `work`, then (inside a mutation field) its audit entry, in the same transaction (src/db/audit-scope.ts). */
async function audited<T>(sql: Sql, work: () => Promise<T>): Promise<T> {
  const result = await work();
  await auditInTransaction(sql, result);
  return result;
}

/** A transaction inside a unit: a savepoint, released on success and rolled back to when `work` throws. */
async function savepoint<T>(unit: Unit, work: () => Promise<T>): Promise<T> {
  const name = `unit_${++unit.savepoints}`;
  await unit.tx.$executeRawUnsafe(`SAVEPOINT ${name}`);
  try {
    const result = await work();
    await unit.tx.$executeRawUnsafe(`RELEASE SAVEPOINT ${name}`);
    return result;
  } catch (err) {
    await unit.tx.$executeRawUnsafe(`ROLLBACK TO SAVEPOINT ${name}`).catch(() => undefined);
    throw err;
  }
}

/** The Prisma client as the application uses it: inside a unit, every call goes to the unit's transaction. */
export function unitAwarePrisma(prisma: PrismaClient): PrismaClient {
  return new Proxy(prisma, {
    get(target, property) {
      const unit = currentUnit();
      if (unit && property === "$transaction") {
        return (work: unknown) =>
          typeof work === "function"
            ? savepoint(unit, () => audited(unit.sql, () => (work as (tx: Tx) => Promise<unknown>)(unit.tx)))
            : Promise.all(work as Promise<unknown>[]);
      }
      if (property === "$transaction" && isAuditing()) {
        return (work: unknown, options?: object) =>
          typeof work === "function"
            ? target.$transaction((tx) => audited(prismaSql(tx), () => (work as (tx: Tx) => Promise<unknown>)(tx)), options)
            : target.$transaction(work as never, options);
      }
      const source = unit && property in unit.tx ? unit.tx : target;
      const value: unknown = Reflect.get(source, property);
      return typeof value === "function" ? value.bind(source) : value;
    },
  });
}

/** Plain SQL as the application uses it: inside a unit, on the unit's transaction. */
export function unitAwareSql(sql: SqlDatabase): SqlDatabase {
  return {
    query: (name, text, values) => (currentUnit()?.sql ?? sql).query(name, text, values),
    transaction(work) {
      const unit = currentUnit();
      return unit ? savepoint(unit, () => audited(unit.sql, () => work(unit.sql))) : sql.transaction((tx) => audited(tx, () => work(tx)));
    },
  };
}
