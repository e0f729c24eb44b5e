import { z } from "zod";
import type { ErrorCode } from "../errors.js";
import type { Route } from "./route.js";

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
  /** Descriptions of the path parameters (every `:name` of the path is documented as a string). */
  params?: Record<string, string>;
  query?: z.ZodObject;
  body?: z.ZodType;
  response: z.ZodType;
  /** Errors beyond those every route may answer (400 bad input, 401, 429). */
  errors?: ErrorCode[];
};

/** A documented endpoint: a REST route, or another /v1 path (the provider webhooks) declared in the same terms. */
export type DocumentedEndpoint = Pick<Route, "method" | "path" | "status" | "errors" | "docs">;

/** Building blocks of the documented shapes: what the REST surface writes, not how the services check it. */
export const doc = {
  id: z.string().describe("identifier (UUID)"),
  timestamp: z.string().meta({ format: "date-time" }),
  userParam: { userId: "the user's id (UUID)" },
  money: z.number().describe("amount in the currency's unit; REST money is a JSON number"),
  sandboxFailure: z.object({ reason: z.string().optional().describe("why it failed") }),
  pageQuery: z.object({
    page: z.int().min(1).optional().describe("page number, from 1 (default 1)"),
    limit: z.int().min(1).optional().describe("items per page"),
  }),
};

/** A service's input schema with its `amount` (checked by the ledger, not by zod) shown as the JSON number REST takes. */
export const withAmount = <T extends z.ZodObject>(schema: T) => schema.extend({ amount: doc.money });
