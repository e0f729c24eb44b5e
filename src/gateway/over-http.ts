import type { Request, Response } from "express";
import type { ExecutionResult } from "graphql";
import { isAsyncIterable, processRegularResult, type GraphQLParams } from "graphql-yoga";
import Negotiator from "negotiator";
import { AppError } from "../errors.js";
import { exchangeOf, type Exchange } from "../http/exchange.js";
import type { Logger } from "../logger.js";
import type { Admission } from "../pipeline/admission.js";
import type { TransportContext } from "../caller/request-info.js";
import { maskError, shapedResult, toApiError } from "../graphql/errors.js";
import { parseRequestJson } from "../exact-json.js";
import type { Yoga } from "./yoga.js";

/** JSON answers, this handler's. `application/json` first: GraphQL over HTTP gives it to `*∕*` and to no Accept. */
const JSON_ANSWERS = ["application/json", "application/graphql-response+json"] as const;
type JsonAnswer = (typeof JSON_ANSWERS)[number];
/** Streams (SSE, incremental delivery) and the GraphiQL page: yoga's. */
const STREAMS = ["text/event-stream", "multipart/mixed"];
const GRAPHIQL_PAGE = "text/html";

const PARAM_NAMES = ["query", "variables", "operationName", "extensions"] as const;

export type GraphqlOverHttpOptions = { yoga: Yoga; logger: Logger; admission: Admission; graphiql: boolean };

/**
 * GraphQL over HTTP, `GET` and `POST /graphql`, for every request whose answer is JSON: the media
 * type is negotiated from Accept by `negotiator` (lists, q-values, `*∕*`, none; 406 when nothing we
 * produce is acceptable), the parameters are read here from the query string or the body Express
 * has read (JSON, `application/graphql`, a form), and from the parameters on, the operation runs
 * through yoga's own `getResultForParams`: the pipeline's `onParams` admission, yoga's parse and
 * validation caches and its mutation-over-GET rule, the enveloped execute and every plugin. Its
 * result is written with yoga's `processRegularResult`. What is left to yoga's handler is what is
 * not one JSON answer: SSE and multipart streams (subscriptions), and the GraphiQL page. Why not
 * yoga's handler for all of it: its Fetch API adapter cost more CPU per request than the lookup it
 * carried (docs/http-edge.md).
 *
 * A request refused here, before it has an operation (406, 415, parameters that cannot be run), is
 * refused after its caller's admission, as any operation that is not public: a caller without a
 * valid credential hears 401 whatever else is wrong, and every refusal draws on the budgets.
 */
export function graphqlOverHttp({ yoga, logger, admission, graphiql }: GraphqlOverHttpOptions) {
  const answers = {
    GET: [...JSON_ANSWERS, ...STREAMS, ...(graphiql ? [GRAPHIQL_PAGE] : [])],
    POST: [...JSON_ANSWERS, ...STREAMS],
  };
  const negotiatorFor = (method: "GET" | "POST") =>
    memoised((accept: string) => new Negotiator({ headers: { accept: withoutUtf8Charset(accept || undefined) } }).mediaType(answers[method]) as string | undefined);
  const negotiate = { GET: negotiatorFor("GET"), POST: negotiatorFor("POST") };
  // The same scope as the operation's, when there was one: yoga's run of it is admitted once.
  const toYoga = (req: Request, res: Response, scope?: TransportContext) =>
    yoga.handle(req, res, scope ?? { requestInfo: exchangeOf(req).enterPipeline("graphql-http"), req });

  return async (req: Request, res: Response) => {
    const exchange = exchangeOf(req);
    exchange.route = "/graphql";
    if (req.method !== "GET" && req.method !== "POST") {
      res.setHeader("Allow", "GET, POST");
      return write(res, refusal(new AppError("METHOD_NOT_ALLOWED", "GraphQL takes GET and POST"), exchange.requestId), "application/json");
    }
    const accepted = negotiate[req.method](req.get("accept") ?? "");
    if (!accepted) {
      res.setHeader("Accept", answers[req.method].join(", "));
      return refuse(req, res, exchange, undefined, "application/json");
    }
    const answerAs: JsonAnswer = isJsonAnswer(accepted) ? accepted : "application/json";
    // yoga's handler builds a URL of the Host and the target: one that does not parse must not reach it.
    if (!isOriginFormWithHost(req)) return refuse(req, res, exchange, new AppError("BAD_USER_INPUT", "Malformed request target or Host header"), answerAs);
    // The GraphiQL page (a browser's GET): yoga's, query or not.
    if (accepted === GRAPHIQL_PAGE) return toYoga(req, res);
    let params: GraphQLParams;
    try {
      params = paramsOf(req);
    } catch (error) {
      return refuse(req, res, exchange, error, answerAs);
    }
    if (!isJsonAnswer(accepted)) return toYoga(req, res);
    const scope: TransportContext = { requestInfo: exchange.enterPipeline("graphql-http"), req };
    let result;
    try {
      result = await yoga.getResultForParams({ params, request: requestView(req) }, scope);
    } catch (error) {
      // What yoga does with an error thrown outside the resolvers: one masked error, GraphQL-shaped.
      result = { errors: [maskError(error, logger, exchange.requestId)] };
    }
    if (isAsyncIterable(result)) {
      // A subscription sent with JSON preferred: its stream is yoga's to answer, as SSE or multipart (or 406).
      await result[Symbol.asyncIterator]().return?.();
      return toYoga(req, res, scope);
    }
    return write(res, shapedResult(result as ExecutionResult, logger, exchange.requestId), answerAs);
  };

  /** Admission first; then the refusal (`undefined`: 406, with no body), or admission's own. */
  async function refuse(req: Request, res: Response, exchange: Exchange, error: unknown, answerAs: JsonAnswer) {
    const scope: TransportContext = { requestInfo: exchange.enterPipeline("graphql-http"), req };
    const admitted = await admission.admitBeforeRefusal(scope).then(
      () => undefined,
      (denied: unknown) => denied,
    );
    if (!admitted && error === undefined) return void res.status(406).end();
    return write(res, refusal(admitted ?? error, exchange.requestId), answerAs);
  }

  async function write(res: Response, result: ExecutionResult, answerAs: JsonAnswer) {
    if (!result.errors?.length && !result.extensions?.http) return writeData(res, result, answerAs);
    const answer = processRegularResult(result, yoga.fetchAPI, answerAs);
    answer.headers.forEach((value, name) => res.setHeader(name, value));
    res.status(answer.status).end(await answer.text());
  }

  function refusal(error: unknown, requestId: string): ExecutionResult {
    return { errors: [error instanceof AppError ? toApiError(error, undefined, requestId) : maskError(error, logger, requestId)] };
  }
}

/**
 * An answer without errors or HTTP extensions, written as `processRegularResult` writes it (status
 * 200, the same headers in the same order, the result's own `stringify` when it has one: exact
 * numbers) without the Fetch Response, its Headers and the promise of its text that the edge then
 * copied onto the Node response. Every other answer (errors, a status or headers set by the
 * pipeline) still goes through yoga's `processRegularResult`, which decides its status.
 */
function writeData(res: Response, result: ExecutionResult, answerAs: JsonAnswer) {
  const stringify = (result as ExecutionResult & { stringify?: (value: unknown) => string }).stringify ?? JSON.stringify;
  const text = stringify(result);
  res.statusCode = 200;
  res.setHeader("Content-Type", `${answerAs}; charset=utf-8`);
  res.setHeader("content-length", String(Buffer.byteLength(text)));
  res.end(text);
}

const isJsonAnswer = (type: string): type is JsonAnswer => (JSON_ANSWERS as readonly string[]).includes(type);

/**
 * `application/json; charset=utf-8` is `application/json` to us (we answer in UTF-8 only): the
 * parameter is dropped before negotiating, where it would otherwise have to match exactly. Any
 * other charset stays, and matches nothing (406), as GraphQL over HTTP asks.
 */
const withoutUtf8Charset = (accept: string | undefined) => accept?.replace(/;\s*charset\s*=\s*"?utf-?8"?\s*(?=[;,]|$)/gi, "");

/** Header values remembered at most; one past that is worked out each time it comes. */
const MAX_REMEMBERED_FORMS = 256;

/**
 * Answers kept by header value (clients send a handful of Accept and Host values, each parsed once
 * here instead of on every request), for the first MAX_REMEMBERED_FORMS only, so hostile headers
 * cannot grow the map.
 */
function memoised<T>(compute: (key: string) => T) {
  const answers = new Map<string, T>();
  return (key: string): T => {
    if (answers.has(key)) return answers.get(key) as T;
    const answer = compute(key);
    if (answers.size < MAX_REMEMBERED_FORMS) answers.set(key, answer);
    return answer;
  };
}

/**
 * An origin-form target (`/graphql?…`) whose URL with the Host header parses, as yoga's handler builds
 * it. After a Host that parses, an origin-form target always does (a path, query and fragment take
 * any text), so only the Host is parsed, once per Host value sent (see `memoised`).
 */
function isOriginFormWithHost(req: Request): boolean {
  return req.originalUrl.startsWith("/") && hostParses(req.headers.host ?? "localhost");
}

const hostParses = memoised((host: string) => URL.canParse(`http://${host}/`));

/**
 * What yoga's hooks read of the request (its method, for the mutation-over-GET rule; its headers, for
 * Last-Event-ID): read from the Node request, with no Fetch Request built.
 */
function requestView(req: Request): globalThis.Request {
  const view = { method: req.method, url: req.originalUrl, headers: { get: (name: string) => req.get(name) ?? null } };
  return view as unknown as globalThis.Request;
}

/** The operation's parameters: from the query string (GET) or the body, by its content type (POST). */
function paramsOf(req: Request): GraphQLParams {
  if (req.method === "GET") return fromSearch(new URLSearchParams(req.originalUrl.split("?")[1] ?? ""));
  const body: unknown = req.body;
  const type = req.get("content-type")?.split(";", 1)[0].trim().toLowerCase();
  if (type !== "application/json" && type !== "application/graphql" && type !== "application/x-www-form-urlencoded") {
    throw new AppError("UNSUPPORTED_MEDIA_TYPE", "Send GraphQL with Content-Type: application/json (or application/graphql, or a form)");
  }
  if (body === undefined || body === "") throw new AppError("BAD_USER_INPUT", 'The request has no body: send {"query": …} with Content-Type: application/json');
  if (type === "application/json") return checked(body);
  if (type === "application/graphql") return checked({ query: body });
  if (/^\s*[[{]/.test(String(body))) throw new AppError("BAD_USER_INPUT", "The body is JSON: send it with Content-Type: application/json");
  return fromSearch(new URLSearchParams(String(body)));
}

/** A query string or form: each parameter at most once (a proxy that reads the first must see what runs). */
function fromSearch(search: URLSearchParams): GraphQLParams {
  const repeated = PARAM_NAMES.find((name) => search.getAll(name).length > 1);
  if (repeated) throw new AppError("BAD_USER_INPUT", `${repeated} is given more than once`, { param: repeated });
  const json = (name: string) => {
    const text = search.get(name);
    if (!text) return undefined;
    try {
      return parseRequestJson(text);
    } catch {
      throw new AppError("BAD_USER_INPUT", `${name} is not valid JSON`, { param: name });
    }
  };
  return checked({
    query: search.get("query") ?? undefined,
    operationName: search.get("operationName") ?? undefined,
    variables: json("variables"),
    extensions: json("extensions"),
  });
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** The parameters' shape, as GraphQL over HTTP has it: anything else is a 400 naming the parameter. */
function checked(candidate: unknown): GraphQLParams {
  if (!isObject(candidate)) throw new AppError("BAD_USER_INPUT", "Batching is not supported: send one operation as a JSON object");
  const unexpected = Object.keys(candidate).find((name) => !(PARAM_NAMES as readonly string[]).includes(name) && candidate[name] != null);
  if (unexpected) throw new AppError("BAD_USER_INPUT", `Unexpected parameter "${unexpected}"`, { param: unexpected });
  const { query, variables, operationName, extensions } = candidate;
  if (query == null || query === "") throw new AppError("BAD_USER_INPUT", "query is required", { param: "query" });
  if (typeof query !== "string") throw new AppError("BAD_USER_INPUT", "query must be a string", { param: "query" });
  if (variables != null && !isObject(variables)) throw new AppError("BAD_USER_INPUT", "variables must be an object", { param: "variables" });
  if (extensions != null && !isObject(extensions)) throw new AppError("BAD_USER_INPUT", "extensions must be an object", { param: "extensions" });
  if (operationName != null && typeof operationName !== "string") throw new AppError("BAD_USER_INPUT", "operationName must be a string", { param: "operationName" });
  return { query, variables: variables ?? undefined, operationName: operationName ?? undefined, extensions: extensions ?? undefined };
}
