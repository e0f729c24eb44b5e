import type { IncomingMessage, ServerResponse } from "node:http";
import { parse as parseQuery } from "node:querystring";
import FindMyWay, { type HTTPMethod } from "find-my-way";
import { validate, type GraphQLSchema } from "graphql";
import { schema as appSchema } from "../graphql/schema.js";
import type { Yoga } from "../graphql/yoga.js";
import type { BodyReader, RequestWithBody } from "../http/body.js";
import { answerFailure, sendEdgeError } from "../http/errors.js";
import { exchangeOf, type Exchange } from "../http/exchange.js";
import { sendJson } from "../http/json.js";
import type { Logger } from "../logger.js";
import { restError, setPipelineHeaders } from "./respond.js";
import type { Route } from "./route.js";

/** Answers the request when a /v1 route matches its method and path; false when none does. */
export type RestTable = (req: IncomingMessage, res: ServerResponse) => boolean;

/** A route whose operation validated, and its path's segments (`["", "v1", "user", ":userId"]`). */
type CompiledRoute = { route: Route; segments: string[] };

export type RestTableOptions = {
  yoga: Yoga;
  readBody: BodyReader;
  logger: Logger;
  /** Requests the table must never take (the Express routes under /v1): a route that would, never boots. */
  leftToExpress: readonly { method: HTTPMethod; path: string }[];
};

/** Validates every route's operation once, at start-up: a route the schema cannot run never boots. */
function compile(route: Route, schema: GraphQLSchema): CompiledRoute {
  const errors = validate(schema, route.operation);
  if (errors.length) throw new Error(`REST route ${route.method} ${route.path}: ${errors[0].message}`);
  return { route, segments: route.path.split("/") };
}

/**
 * The /v1 table, executed through yoga's enveloped pipeline: the same admission, rate limits, text
 * rule, cost limit, idempotency and error mapping as GraphQL over HTTP and websockets.
 *
 * Paths are matched by find-my-way (Fastify's radix-tree router) as Express matched them: in any
 * case, with or without a trailing slash, a static segment before a parameter (the table lists
 * `/v1/accounts/usdc/:userId` before `/v1/accounts/:currency/:userId`), parameters percent-decoded
 * (a malformed encoding under /v1 is a 400), query strings parsed by `node:querystring` (Express's
 * "simple" parser). find-my-way is more lenient than Express was (it decodes and lower-cases the
 * static segments too, and takes an empty parameter), so a match must also be as written
 * (`asWritten`): `/v1/%75ser/…` is not `/v1/user/…` to a proxy that filters by path, nor here. HEAD
 * is answered as GET without the body. The profile showed Express's layer walk as the
 * largest cost after the socket writes on the lookup path.
 */
export function restTable(routes: Route[], options: RestTableOptions): RestTable {
  const router = FindMyWay({
    caseSensitive: false,
    ignoreTrailingSlash: true,
    // Ids of any length reach the operation, which refuses a bad one as it always has.
    maxParamLength: 16 * 1024,
    querystringParser: (query) => parseQuery(query),
    onBadUrl: () => undefined,
  });
  for (const route of routes) {
    const store = compile(route, appSchema);
    router.on(route.method, route.path, () => undefined, store);
    if (route.method === "GET") router.on("HEAD", route.path, () => undefined, store);
  }
  for (const { method, path } of options.leftToExpress) {
    const taken = router.find(method, path)?.store as CompiledRoute | null | undefined;
    if (taken) throw new Error(`REST route ${taken.route.method} ${taken.route.path} would take ${method} ${path}, which is not the table's`);
  }
  return (req, res) => {
    const url = req.url ?? "/";
    const found = router.find(req.method as HTTPMethod, url);
    if (!found) return false;
    const compiled = found.store as CompiledRoute | null;
    if (!compiled) {
      // A path whose percent-encoding does not decode (find-my-way's bad-URL answer carries no route).
      if (!/^\/v1\//i.test(url)) return false;
      sendEdgeError(res, new URIError("malformed path"), options.logger);
      return true;
    }
    const exchange = exchangeOf(req);
    if (!asWritten(compiled.segments, exchange.path)) return false;
    void answer(compiled.route, exchange, req, res, { params: found.params as Record<string, string>, query: found.searchParams }, options);
    return true;
  };
}

/**
 * Whether the path as sent matches the route's segments as Express matched them: each static
 * segment equal in any ASCII case, each parameter non-empty, one trailing slash at most.
 */
function asWritten(segments: string[], path: string): boolean {
  const sent = path.split("/");
  if (sent.length === segments.length + 1 && sent[sent.length - 1] === "") sent.pop();
  if (sent.length !== segments.length) return false;
  return segments.every((segment, i) => (segment.startsWith(":") ? sent[i] !== "" : sent[i].toLowerCase() === segment));
}

async function answer(
  route: Route,
  exchange: Exchange,
  req: RequestWithBody,
  res: ServerResponse,
  matched: { params: Record<string, string>; query: Record<string, unknown> },
  { yoga, readBody, logger }: RestTableOptions,
) {
  exchange.route = route.path;
  try {
    await readBody(req, res);
    const requestInfo = exchange.enterPipeline("rest");
    const { schema, execute, contextFactory } = yoga.getEnveloped({ requestInfo, req });
    const input = { ...matched, body: bodyOf(req) };
    const result = await execute({
      schema,
      document: route.operation,
      variableValues: route.variables?.(input) ?? {},
      contextValue: await contextFactory(),
    });
    setPipelineHeaders(res, result);
    if (result.errors?.length) {
      const error = restError(result.errors[0], route.errors);
      return sendJson(res, error.status, error.body);
    }
    sendJson(res, route.status ?? 200, route.result(result.data));
  } catch (err) {
    answerFailure(res, err, logger);
  }
}

/** A JSON object body; anything else (no body, an array, a bare value) reads as no fields. */
function bodyOf(req: RequestWithBody): Record<string, unknown> {
  const body = req.body;
  return body && typeof body === "object" && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
}
