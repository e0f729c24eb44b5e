/**
 * Shaping shared by every resource's representation module (src/<domain>/representation.ts), which
 * both the /v1 route table and the event log use: one shape of each resource on every surface.
 */

/** The listed keys of a record, in the listed order: a contract shape cut from a wider GraphQL selection. */
export function pickKeys<K extends string>(record: Record<string, unknown>, keys: readonly K[]): Record<K, unknown> {
  return Object.fromEntries(keys.map((key) => [key, record[key]])) as Record<K, unknown>;
}

/** REST speaks JSON numbers for money (the contract); GraphQL keeps the exact decimal string. */
export function withNumbers<T extends Record<string, unknown>>(record: T, fields: readonly string[]): T {
  const copy: Record<string, unknown> = { ...record };
  for (const field of fields) {
    if (typeof copy[field] === "string") copy[field] = Number(copy[field]);
  }
  return copy as T;
}
