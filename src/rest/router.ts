import { Router, type NextFunction, type Request, type RequestHandler, type Response } from "express";
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
 *
 * Routes are grouped by the segment after /v1 (`user`, `wallet`, …), each group an Express router
 * holding its routes in table order: a request is matched against its own group's few routes, not
 * against the whole table one by one (the profile showed Express's route walk on every lookup).
 * Every route's second segment is static, so the grouping changes no match.
 */
export function restRouter(routes: Route[], yoga: Yoga): RequestHandler {
  const groups = new Map<string, Router>();
  for (const route of routes) {
    const group = groupOf(route.path);
    if (!group || group.includes(":")) throw new Error(`REST route ${route.path}: the segment after /v1 must be static`);
    if (!groups.has(group)) groups.set(group, Router());
    const method = route.method.toLowerCase() as "get" | "post" | "delete";
    groups.get(group)![method](route.path, handler(route, compile(route, appSchema), yoga));
  }
  return (req: Request, res: Response, next: NextFunction) => {
    const group = groups.get(groupOf(req.path)?.toLowerCase() ?? "");
    if (group) group(req, res, next);
    else next();
  };
}

/** `user` for `/v1/user/…`; undefined outside /v1. */
function groupOf(path: string): string | undefined {
  const [, version, group] = path.split("/", 3);
  return version?.toLowerCase() === "v1" ? group : undefined;
}

function handler(route: Route, document: DocumentNode, yoga: Yoga) {
  return async (req: Request, res: Response) => {
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
  };
}

/** A JSON object body; anything else (no body, an array, a bare value) reads as no fields. */
function bodyOf(req: Request): Record<string, unknown> {
  const body: unknown = req.body;
  return body && typeof body === "object" && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
}
