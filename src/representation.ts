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

/**
 * A decimal written as a JSON number with every digit: REST's serializer (src/http/json.ts, lossless-json)
 * and every other writer of money (src/exact-json.ts: the event log, webhook bodies, SSE frames, GraphQL
 * answers carrying events) write its text as it is, so `163.808222690160182292` stays exact in the JSON
 * text even where a client's double does not. Plain `JSON.stringify` would write the nearest double.
 */
export class ExactNumber extends LosslessNumber {
  /** `decimal`: decimal text; written in plain notation without trailing zeros (`50000.00` as `50000`). */
  constructor(decimal: string) {
    // A constructed Decimal is exact (decimal.js rounds only the results of arithmetic).
    super(new Decimal(decimal).toFixed());
  }

  toJSON(): number {
    return Number(this.value);
  }
}

/** REST speaks JSON numbers for money (the contract), exact to the last digit; GraphQL keeps the exact decimal string. */
export function withNumbers<T extends Record<string, unknown>>(record: T, fields: readonly string[]): T {
  const copy: Record<string, unknown> = { ...record };
  for (const field of fields) {
    if (typeof copy[field] === "string") copy[field] = new ExactNumber(copy[field]);
  }
  return copy as T;
}
