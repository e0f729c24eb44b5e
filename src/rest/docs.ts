import { z } from "zod";
import type { ErrorCode } from "../errors.js";

/**
 * What the OpenAPI document says about one route (src/rest/openapi.ts). Schemas are zod, rendered
 * with `z.toJSONSchema` as the request arrives (`io: "input"`), so a service's own input schema can
 * be reused as it is.
 */
export type RouteDocs = {
  summary: string;
  description?: string;
  /**
   * Which credentials it takes: an API key or a session JWT (the default), only a session, none,
   * or a provider's webhook signature.
   */
  auth?: "credentials" | "session" | "public" | "signature";
  /**
   * The path parameters: a description (a string), or a schema with its description (a closed set
   * such as a currency). Every `:name` of the path is documented, as a string unless given a schema.
   */
  params?: Record<string, string | z.ZodType>;
  query?: z.ZodObject;
  body?: z.ZodType;
  response: z.ZodType;
  /** Errors beyond those every route may answer (400 bad input, 401, 403 for an API key, 429, 500, 503). */
  errors?: ErrorCode[];
  /**
   * One exchange as a client sees it: the body it sends (when the route takes one) and the success
   * body it gets. Shown in the document and checked against its schemas (test/openapi.test.ts).
   */
  example: { body?: unknown; response: unknown };
};

/**
 * A schema under its name in the document's `components.schemas`, where generated clients find it as
 * a named type. A copy is named: the schema given (often a service's own input) is left as it is.
 */
export const named = <T extends z.ZodType>(name: string, schema: T): T => schema.meta({ id: name });

/** Building blocks of the documented shapes: what the REST surface writes, not how the services check it. */
export const doc = {
  /** A code from a closed set (a currency, a network) as the REST surface takes it: documented upper-case, accepted in any case. */
  oneOf: <const T extends readonly string[]>(values: T, description: string) => z.enum(values).describe(`${description} (any case)`),
  id: z.string().describe("identifier (UUID)"),
  timestamp: z.string().meta({ format: "date-time" }),
  livemode: z.boolean().describe("true for an object of live mode, false for one of test mode: the mode of the key (or session) that reads it"),
  userParam: { userId: "the user's id (UUID)" },
  metadata: z.record(z.string(), z.string()).meta({ examples: [{ segment: "gold" }] }),
  money: z.number().describe("amount in the currency's unit; REST money is a JSON number"),
  sandboxFailure: z.object({ reason: z.string().optional().describe("why it failed") }),
  pageQuery: z.object({
    page: z.int().min(1).optional().describe("page number, from 1 (default 1)"),
    limit: z.int().min(1).optional().describe("items per page"),
  }),
};

/** A service's input schema with its `amount` (checked by the ledger, not by zod) shown as the JSON number REST takes. */
export const withAmount = <T extends z.ZodObject>(schema: T) => schema.extend({ amount: doc.money });
