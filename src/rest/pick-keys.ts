/** The listed keys of a record, in the listed order: a contract shape cut from a wider GraphQL selection. */
export function pickKeys<K extends string>(record: Record<string, unknown>, keys: readonly K[]): Record<K, unknown> {
  return Object.fromEntries(keys.map((key) => [key, record[key]])) as Record<K, unknown>;
}
