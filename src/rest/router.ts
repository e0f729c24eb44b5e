import { Router, type Request, type Response } from "express";
import { validate, type GraphQLSchema } from "graphql";
import { schema as appSchema } from "../gateway/schema.js";
import type { Yoga } from "../gateway/yoga.js";
import { exchangeOf } from "../http/exchange.js";
import { sendJson } from "../http/json.js";
import { callerFieldsOf, type CallerFieldOf } from "./caller-fields.js";
import { unknownFieldOf } from "./request-fields.js";
import { restError, setPipelineHeaders } from "./respond.js";
import type { RestInput, Route } from "./route.js";

export const REST_MOUNT = "/v1";

/**
 * A route's path below the router's mount, once its operation is validated: a route the schema
 * cannot run, or outside /v1, never boots.
 */
function mountedPath(route: Route, schema: GraphQLSchema): string {
  const errors = validate(schema, route.operation);
  if (errors.length) throw new Error(`REST route ${route.method} ${route.path}: ${errors[0].message}`);
  if (!route.path.startsWith(`${REST_MOUNT}/`)) throw new Error(`REST route ${route.method} ${route.path} is not under ${REST_MOUNT}`);
  return route.path.slice(REST_MOUNT.length);
}

/**
 * The /v1 table as one Express router, mounted at `REST_MOUNT`: each route a single handler that runs its GraphQL operation
 * through yoga's enveloped pipeline (the same admission, rate limits, text rule, cost limit,
 * idempotency and error mapping as GraphQL over HTTP and websockets), in the table's order, so a
 * static segment wins over a parameter where the table lists it first. Express matches paths in any
 * case, with one optional trailing slash, against the path as sent (`/v1/%75ser` is not `/v1/user`),
 * decodes parameters (a malformed encoding is a 400, `sendEdgeError`), answers HEAD as GET, and
 * parses query strings with `node:querystring` ("simple"). Errors thrown here reach Express's error
 * handler.
 */
export function restRouter(routes: readonly Route[], yoga: Yoga): Router {
  const router = Router({ caseSensitive: false, strict: false });
  for (const route of routes) {
    const method = route.method.toLowerCase() as Lowercase<Route["method"]>;
    const fields = { callerFieldsIn: callerFieldsOf(route), unknownFieldIn: unknownFieldOf(route) };
    router[method](mountedPath(route, appSchema), (req, res) => answer(route, fields, req, res, yoga));
  }
  return router;
}

type RequestFields = { callerFieldsIn: (input: RestInput) => CallerFieldOf; unknownFieldIn: (input: RestInput) => string | undefined };

async function answer(route: Route, fields: RequestFields, req: Request, res: Response, yoga: Yoga) {
  const exchange = exchangeOf(req);
  exchange.route = route.path;
  const input = { params: req.params as Record<string, string>, query: req.query as Record<string, unknown>, body: bodyOf(req) };
  const requestInfo = exchange.enterPipeline("rest");
  const unknown = (requestInfo.unknownParameter = fields.unknownFieldIn(input));
  const { schema, execute, contextFactory } = yoga.getEnveloped({ requestInfo, req });
  const result = await execute({
    schema,
    document: route.operation,
    variableValues: route.variables?.(input) ?? {},
    contextValue: await contextFactory(),
  });
  setPipelineHeaders(res, result);
  if (result.errors?.length) {
    // A field the route does not take is named as sent: never renamed after an operation field it resembles (`id`).
    const asSent = unknown !== undefined && result.errors[0].extensions?.param === unknown;
    const error = restError(result.errors[0], route.errors, asSent ? undefined : fields.callerFieldsIn(input));
    return sendJson(res, error.status, error.body);
  }
  sendJson(res, route.status ?? 200, route.result(result.data));
}

/** A JSON object body; anything else (no body, an array, a bare value) reads as no fields. */
function bodyOf(req: Request): Record<string, unknown> {
  const body: unknown = req.body;
  return body && typeof body === "object" && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
}
