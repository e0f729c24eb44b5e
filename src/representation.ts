import { LosslessNumber } from "lossless-json";
import { Decimal } from "decimal.js";

/**
 * Shaping shared by every resource's representation module (src/<domain>/representation.ts), which
 * both the /v1 route table and the event log use: one shape of each resource on every surface.
 */

/** The listed keys of a record, in the listed order: a contract shape cut from a wider GraphQL selection. */
export function pickKeys<K extends string>(record: Record<string, unknown>, keys: readonly K[]): Record<K, unknown> {
  return Object.fromEntries(keys.map((key) => [key, record[key]])) as Record<K, unknown>;
}

/** ExactNumbers JSON.stringify has written whose nearest double reads differently from their digits. */
let inexactWrites = 0;

/**
 * A decimal written as a JSON number with every digit: every writer of money (src/exact-json.ts: REST
 * answers, the event log, webhook bodies, SSE frames, GraphQL answers carrying events) writes its text
 * as it is, so `163.808222690160182292` stays exact in the JSON text even where a client's double does
 * not. Plain `JSON.stringify` writes the nearest double, which is the same text for most amounts
 * (`10.5`, `50000`): it counts the others (`inexactWriteCount`), and the writers then write losslessly.
 */
export class ExactNumber extends LosslessNumber {
  /** `decimal`: decimal text; written in plain notation without trailing zeros (`50000.00` as `50000`). */
  constructor(decimal: string) {
    // A constructed Decimal is exact (decimal.js rounds only the results of arithmetic).
    super(new Decimal(decimal).toFixed());
  }

  toJSON(): number {
    const double = Number(this.value);
    if (String(double) !== this.value) inexactWrites++;
    return double;
  }
}

/** How many ExactNumbers JSON.stringify has written inexactly so far (compared before and after one call). */
export const inexactWriteCount = () => inexactWrites;

/** REST speaks JSON numbers for money (the contract), exact to the last digit; GraphQL keeps the exact decimal string. */
export function withNumbers<T extends Record<string, unknown>>(record: T, fields: readonly string[]): T {
  const copy: Record<string, unknown> = { ...record };
  for (const field of fields) {
    if (typeof copy[field] === "string") copy[field] = new ExactNumber(copy[field]);
  }
  return copy as T;
}

type Row = Record<string, unknown>;

/**
 * A row's values as GraphQL serialises them (exact decimal strings, ISO timestamps), which the REST shapes
 * expect: how a domain builds the `data.object` of its events from a database row.
 */
export function asGraphQLValues(row: object): Row {
  return Object.fromEntries(
    Object.entries(row).map(([key, value]) => {
      if (value instanceof Date) return [key, value.toISOString()];
      // A Decimal (metadata, a plain object, may hold a "toFixed" key, but never a function).
      if (typeof value === "object" && value !== null && typeof (value as { toFixed?: unknown }).toFixed === "function") return [key, String(value)];
      return [key, value];
    }),
  );
}
