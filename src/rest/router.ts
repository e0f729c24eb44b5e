import { Router, type Request, type Response } from "express";
import { validate, type DocumentNode, type GraphQLSchema } from "graphql";
import { schema as appSchema } from "../graphql/schema.js";
import type { Yoga } from "../graphql/yoga.js";
import { httpRequestInfo } from "../pipeline/request-info.js";
import { restError, setPipelineHeaders } from "./respond.js";
import type { Route } from "./route.js";

/** Validates every route's operation once, at start-up: a route the schema cannot run never boots. */
function compile(route: Route, schema: GraphQLSchema): DocumentNode {
  const errors = validate(schema, route.operation);
  if (errors.length) throw new Error(`REST route ${route.method} ${route.path}: ${errors[0].message}`);
  return route.operation;
}

/**
 * The /v1 table, executed through yoga's enveloped pipeline: the same admission, rate limits, text
 * rule, cost limit, idempotency and error mapping as GraphQL over HTTP and websockets.
 */
export function restRouter(routes: Route[], yoga: Yoga): Router {
  const router = Router();
  for (const route of routes) {
    const method = route.method.toLowerCase() as "get" | "post" | "delete";
    const document = compile(route, appSchema);
    router[method](route.path, async (req: Request, res: Response) => {
      const requestInfo = httpRequestInfo(req, "rest");
      res.locals.requestInfo = requestInfo;
      const { schema, execute, contextFactory } = yoga.getEnveloped({ requestInfo, req, res });
      const input = { params: req.params as Record<string, string>, query: req.query, body: bodyOf(req) };
      const result = await execute({
        schema,
        document,
        variableValues: route.variables?.(input) ?? {},
        contextValue: await contextFactory(),
      });
      setPipelineHeaders(res, result);
      if (result.errors?.length) {
        const error = restError(result.errors[0], route.errors);
        res.status(error.status).json(error.body);
        return;
      }
      res.status(route.status ?? 200).json(route.result(result.data));
    });
  }
  return router;
}

/** A JSON object body; anything else (no body, an array, a bare value) reads as no fields. */
function bodyOf(req: Request): Record<string, unknown> {
  const body: unknown = req.body;
  return body && typeof body === "object" && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
}
