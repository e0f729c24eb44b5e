import { z } from "zod";
import { badInput } from "./errors.js";

/**
 * The client's own key-value pairs on users, virtual accounts, withdrawals and webhook endpoints,
 * with Stripe's limits. The one validator: every service takes metadata through the schemas below.
 */
export const METADATA_LIMITS = { keys: 50, keyLength: 40, valueLength: 500 } as const;

export type Metadata = Record<string, string>;

/** Characters as a reader counts them (code points), not UTF-16 units. */
const length = (text: string) => [...text].length;
const quoted = (key: string) => JSON.stringify(key);

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function keyProblem(key: string): string | undefined {
  const size = length(key);
  if (size < 1 || size > METADATA_LIMITS.keyLength) return `key ${quoted(key)} must be 1 to ${METADATA_LIMITS.keyLength} characters`;
  if (/[[\]]/.test(key)) return `key ${quoted(key)} must not contain [ or ]`;
  // JavaScript's prototype setter: layers below (the ORM's JSON writer) would drop it silently.
  if (key === "__proto__") return `key ${quoted(key)} is reserved`;
  return undefined;
}

function valueProblem(key: string, value: unknown, emptyAllowed: boolean): string | undefined {
  if (typeof value !== "string") return `value of ${quoted(key)} must be a string`;
  if (!emptyAllowed && value === "") return `value of ${quoted(key)} must not be empty`;
  if (length(value) > METADATA_LIMITS.valueLength) return `value of ${quoted(key)} must be at most ${METADATA_LIMITS.valueLength} characters`;
  return undefined;
}

/**
 * Changes to metadata: a key with a string value is set, a key set to "" or null is removed. On
 * create they apply to no metadata, so "" and null simply leave the key out.
 */
export type MetadataChanges = { set: Metadata; remove: string[] };

function readChanges(value: unknown, ctx: z.RefinementCtx): MetadataChanges | typeof z.NEVER {
  if (!isPlainObject(value)) {
    ctx.addIssue({ code: "custom", message: "must be an object whose values are strings" });
    return z.NEVER;
  }
  const changes: MetadataChanges = { set: Object.create(null) as Metadata, remove: [] };
  const entries = Object.entries(value);
  if (entries.length > METADATA_LIMITS.keys) {
    ctx.addIssue({ code: "custom", message: `must have at most ${METADATA_LIMITS.keys} keys (it has ${entries.length})` });
    return z.NEVER;
  }
  for (const [key, entry] of entries) {
    const problem = keyProblem(key) ?? (entry === null ? undefined : valueProblem(key, entry, true));
    if (problem) {
      ctx.addIssue({ code: "custom", message: problem });
      return z.NEVER;
    }
    if (entry === null || entry === "") changes.remove.push(key);
    else changes.set[key] = entry as string;
  }
  return changes;
}

/** What the documents show of metadata (the checks themselves are the code above). */
const documented = (description: string, valueTypes: string[]) => ({
  type: "object",
  description,
  maxProperties: METADATA_LIMITS.keys,
  propertyNames: { minLength: 1, maxLength: METADATA_LIMITS.keyLength, pattern: "^[^\\[\\]]*$" },
  additionalProperties: { type: valueTypes, maxLength: METADATA_LIMITS.valueLength },
  examples: [{ customerRef: "cus_8812", segment: "gold" }],
});

const LIMITS_TEXT = `at most ${METADATA_LIMITS.keys} keys of 1–${METADATA_LIMITS.keyLength} characters without [ or ], string values of at most ${METADATA_LIMITS.valueLength} characters`;

export const METADATA_DESCRIPTION = "Your own key-value pairs (string values); {} when none.";
export const METADATA_INPUT_DESCRIPTION = `An object of string values: ${LIMITS_TEXT}. A key set to "" or null is removed (on create: left out).`;

/** `metadata` on create and update: the changes it asks for (null or absent: none). */
export const metadataChanges = z
  .unknown()
  .optional()
  .transform((value, ctx) => (value === undefined || value === null ? { set: Object.create(null) as Metadata, remove: [] } : readChanges(value, ctx)))
  .meta(documented(`Your own key-value pairs. ${METADATA_INPUT_DESCRIPTION}`, ["string", "null"]));

/** Metadata as it is on a new record: the keys set, none removed. */
export const newMetadata = (changes: MetadataChanges): Metadata => ({ ...changes.set });

/** The record's metadata after the changes; the key limit applies to the result (a 400 beyond it). */
export function mergeMetadata(current: unknown, changes: MetadataChanges): Metadata {
  const merged: Metadata = Object.assign(Object.create(null) as Metadata, isPlainObject(current) ? current : {}, changes.set);
  for (const key of changes.remove) delete merged[key];
  const count = Object.keys(merged).length;
  if (count > METADATA_LIMITS.keys) throw badInput(`metadata: must have at most ${METADATA_LIMITS.keys} keys once merged (it would have ${count})`);
  return { ...merged };
}

/** The list filter: every pair must be present (AND); values are non-empty strings. */
export const metadataFilter = z
  .unknown()
  .transform((value, ctx): Metadata | typeof z.NEVER => {
    if (!isPlainObject(value) || Object.keys(value).length === 0) {
      ctx.addIssue({ code: "custom", message: "must be key-value pairs to match, as metadata[key]=value" });
      return z.NEVER;
    }
    for (const [key, entry] of Object.entries(value)) {
      const problem = keyProblem(key) ?? valueProblem(key, entry, false);
      if (problem) {
        ctx.addIssue({ code: "custom", message: problem });
        return z.NEVER;
      }
    }
    return { ...(value as Metadata) };
  });

/** The record's metadata as read from the database (a JSON object of strings, `{}` when none). */
export const storedMetadata = (value: unknown): Metadata => (isPlainObject(value) ? (value as Metadata) : {});
