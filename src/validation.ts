import { getAddress, isAddress, type Address } from "viem";
import { z } from "zod";
import { regexes } from "zod/v4/core";
import { AppError, badInput } from "./errors.js";

/** Parses input with a zod schema; the first problem becomes a 400 naming the field. */
export function parseInput<T extends z.ZodType>(schema: T, input: unknown): z.infer<T> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue.path.join(".");
  throw new AppError("BAD_USER_INPUT", field ? `${field}: ${issue.message}` : issue.message);
}

export const uuid = (field: string) =>
  z.string({ error: `${field} is required` }).uuid({ error: `${field} must be a UUID` });

/** zod's own UUID pattern, so the fast path and the schema agree. */
const UUID = regexes.uuid();

export const isUuid = (value: string) => UUID.test(value);

/** Checks an id that names a resource (a path parameter or an `id` argument); on every request, so no schema is built. */
export function requireUuid(value: unknown, field: string): string {
  if (typeof value === "string" && UUID.test(value)) return value;
  return parseInput(uuid(field), value);
}

/** An e-mail address, trimmed and in lower case (addresses are unique per client in that form). */
export const email = z.string({ error: "email is required" }).trim().toLowerCase().email({ error: "email must be a valid e-mail address" }).max(254);

/** A code from a fixed list (a currency, a network), in any case and surrounding space; given back in upper case. */
export const upperCaseCode = <T extends string>(field: string, values: readonly T[]) =>
  z
    .string({ error: `${field} must be one of ${values.join(", ")}` })
    .transform((value) => value.trim().toUpperCase())
    .pipe(z.enum(values, { error: `${field} must be one of ${values.join(", ")}` }))
    // The OpenAPI document shows the values (upper-case; any case is accepted).
    .meta({ enum: [...values] });

/** A currency from a path or argument, case-insensitive; anything else is refused naming what is supported. */
export function parseCurrency<C extends string>(value: unknown, supported: readonly C[]): C {
  const upper = typeof value === "string" ? value.toUpperCase() : "";
  const currency = supported.find((code) => code === upper);
  if (!currency) throw badInput(`Unsupported currency ${String(value)}; supported: ${supported.join(", ")}`);
  return currency;
}

export const pageNumber = z.number({ error: "page must be an integer ≥ 1" }).int("page must be an integer ≥ 1").min(1, "page must be an integer ≥ 1");

export const pageArgs = (maxLimit: number, defaultLimit: number) =>
  z.object({
    page: pageNumber.default(1),
    limit: z
      .number({ error: `limit must be an integer from 1 to ${maxLimit}` })
      .int(`limit must be an integer from 1 to ${maxLimit}`)
      .min(1, `limit must be an integer from 1 to ${maxLimit}`)
      .max(maxLimit, `limit must be an integer from 1 to ${maxLimit}`)
      .default(defaultLimit),
  });

/**
 * The one rule for an EVM address, on every route that takes one (withdrawals, virtual accounts):
 * `0x` and 40 hex digits, surrounding space ignored; all-lower or all-upper hex carries no checksum
 * (EIP-55), mixed case must carry a valid one. Given back in its EIP-55 form, as stored.
 */
export function isEvmAddress(value: string): boolean {
  const hex = value.slice(2);
  const mixedCase = hex !== hex.toLowerCase() && hex !== hex.toUpperCase();
  return isAddress(value, { strict: mixedCase });
}

export const evmAddress = (field: string) =>
  z
    .string({ error: `${field} is required` })
    .trim()
    .refine(isEvmAddress, `${field} must be a valid EVM address: 0x and 40 hex digits (EIP-55 checksum when mixed-case)`)
    .transform((value) => getAddress(value) as Address);
