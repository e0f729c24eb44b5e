import type { ServerResponse } from "node:http";
import { getOperationAST, type DocumentNode, type ExecutionResult } from "graphql";
import { processRegularResult, type Plugin } from "graphql-yoga";
import type { RequestWithBody } from "../http/body.js";
import { exchangeOf } from "../http/exchange.js";
import type { Logger } from "../logger.js";
import { maskError } from "./errors.js";
import type { Yoga } from "./yoga.js";

type Params = { query: string; variables?: Record<string, unknown> | null; operationName?: string | null };

/** The Accept values whose answer is one media type in yoga's negotiation; lists and parameters go to yoga. */
const ANSWERED_AS: Record<string, string> = {
  "": "application/json",
  "*/*": "application/json",
  "application/json": "application/json",
  "application/graphql-response+json": "application/graphql-response+json",
};

/** Documents kept at most; one pushed out is answered by yoga once more, then known again. */
const MAX_DOCUMENTS = 1000;
/** Longer texts (padded with comments, say) are never kept: yoga answers them every time. */
const MAX_SOURCE_LENGTH = 10_000;

/**
 * The query texts that have parsed and validated once in the pipeline (on any transport). Only
 * those take the direct path: a document's first request, and every one that fails, is yoga's to
 * parse, validate and answer, so its errors are shaped exactly as before.
 */
export class ValidatedDocuments {
  private readonly sources = new WeakMap<DocumentNode, string>();
  private readonly bySource = new Map<string, DocumentNode>();

  has(source: string): boolean {
    return this.bySource.has(source);
  }

  plugin(): Plugin {
    return {
      onParse: ({ params }) => ({ result }) => {
        const source = String(params.source);
        if (result && !(result instanceof Error) && source.length <= MAX_SOURCE_LENGTH) this.sources.set(result as DocumentNode, source);
      },
      onValidate: ({ params }) => ({ valid }) => {
        const source = this.sources.get(params.documentAST);
        if (!valid || source === undefined || this.bySource.has(source)) return;
        if (this.bySource.size >= MAX_DOCUMENTS) this.bySource.delete(this.bySource.keys().next().value!);
        this.bySource.set(source, params.documentAST);
      },
    };
  }
}

/**
 * GraphQL over HTTP for the common request, executed through yoga's enveloped pipeline directly (as
 * the /v1 table and graphql-ws do) and answered by yoga's own result processor: a POST to exactly
 * `/graphql` of an `application/json` body `{query, variables?, operationName?}` with no query string, no Origin (browsers get yoga's
 * CORS handling), Accept absent, `*∕*`, `application/json` or `application/graphql-response+json`,
 * whose document is a known valid one (`ValidatedDocuments`) and selects a query or mutation.
 * Everything else (GET, SSE, subscriptions, other bodies, new or failing documents, batches) goes on
 * to `yoga.handle`, which answers as it always has. Why: the Fetch API adapter yoga puts around each Node request cost more CPU than
 * the lookup it carried (README, Measured).
 */
export function directJsonPost(yoga: Yoga, validated: ValidatedDocuments, logger: Logger) {
  /** Resolves to false, having answered nothing, when the request is yoga's to answer. */
  return async (req: RequestWithBody, res: ServerResponse): Promise<boolean> => {
    const params = plainParams(req.body);
    const answeredAs = ANSWERED_AS[req.headers.accept?.trim().toLowerCase() ?? ""];
    const plainRequest = req.url === "/graphql" && mediaType(req.headers["content-type"]) === "application/json" && req.headers.origin === undefined;
    if (!plainRequest || !params || !answeredAs || !validated.has(params.query)) return false;
    const exchange = exchangeOf(req);
    exchange.route = "/graphql";
    const requestInfo = exchange.enterPipeline("graphql-http");
    const enveloped = yoga.getEnveloped({ requestInfo, req });
    // Answered from yoga's parse and validation caches, through the same plugins as on its own path.
    const document = enveloped.parse(params.query);
    const operation = getOperationAST(document, params.operationName);
    if (!operation || operation.operation === "subscription" || enveloped.validate(enveloped.schema, document).length) return false;
    let result: ExecutionResult;
    try {
      result = (await enveloped.execute({
        schema: enveloped.schema,
        document,
        operationName: params.operationName,
        variableValues: params.variables,
        contextValue: await enveloped.contextFactory(),
      })) as ExecutionResult;
    } catch (error) {
      // What yoga does with an error thrown outside the resolvers: one masked error, GraphQL-shaped.
      result = { errors: [maskError(error, logger, requestInfo.requestId)] };
    }
    const answer = processRegularResult(result, yoga.fetchAPI, answeredAs);
    res.writeHead(answer.status, Object.fromEntries(answer.headers));
    res.end(await answer.text());
    return true;
  };
}

/** `application/json` for `Application/JSON; charset=utf-8`. */
const mediaType = (contentType: string | undefined) => contentType?.split(";", 1)[0].trim().toLowerCase();

function plainParams(body: unknown): Params | undefined {
  if (!isObject(body)) return undefined;
  const { query, variables, operationName, ...rest } = body;
  if (typeof query !== "string" || Object.keys(rest).length) return undefined;
  if (variables != null && !isObject(variables)) return undefined;
  if (operationName != null && typeof operationName !== "string") return undefined;
  return { query, variables: variables as Params["variables"], operationName };
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
