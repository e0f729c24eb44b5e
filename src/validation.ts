import { z } from "zod";
import { AppError } from "./errors.js";

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

/** Checks an id that names a resource (a path parameter or an `id` argument). */
export function requireUuid(value: unknown, field: string): string {
  return parseInput(uuid(field), value);
}

export const pageArgs = (maxLimit: number, defaultLimit: number) =>
  z.object({
    page: z.number({ error: "page must be an integer ≥ 1" }).int("page must be an integer ≥ 1").min(1, "page must be an integer ≥ 1").default(1),
    limit: z
      .number({ error: `limit must be an integer from 1 to ${maxLimit}` })
      .int(`limit must be an integer from 1 to ${maxLimit}`)
      .min(1, `limit must be an integer from 1 to ${maxLimit}`)
      .max(maxLimit, `limit must be an integer from 1 to ${maxLimit}`)
      .default(defaultLimit),
  });
