import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import type { Logger } from "../logger.js";
import type { Metrics } from "../metrics/metrics.js";
import type { RestTable } from "../rest/router.js";
import type { BodyReader, RequestWithBody } from "./body.js";
import { answerFailure } from "./errors.js";
import { observeExchange } from "./exchange.js";

export type FrontDoorOptions = {
  logger: Logger;
  metrics: Metrics;
  /** The caller's address, as TRUST_PROXY allows it to be read. */
  clientIp: (req: IncomingMessage) => string;
  readBody: BodyReader;
  /** The /v1 table. */
  rest: RestTable;
  /** GraphQL over HTTP for a plain JSON POST of a known document; false when it is yoga's to answer. */
  graphqlPost: (req: RequestWithBody, res: ServerResponse) => Promise<boolean>;
  /** Everything else: health, metrics, the developer pages, provider webhooks and yoga's own GraphQL path. */
  fallback: RequestListener;
};

/**
 * The server's request listener. Every request gets its exchange (id, access-log line, metrics)
 * here; the /v1 table and plain GraphQL POSTs are answered without a framework in between, and the
 * rest goes on to the Express app. Only the edge lives here: what an operation may do is decided by
 * the pipeline's plugins, the same for every transport.
 */
export function frontDoor(options: FrontDoorOptions): RequestListener {
  // The line's fields are fixed and hold no secret, so it skips the logger's redaction walk.
  const edge = { accessLogger: options.logger.child({}, { redact: [] }), metrics: options.metrics, clientIp: options.clientIp };
  return (req, res) => {
    observeExchange(req, res, edge);
    try {
      if (options.rest(req, res)) return;
      if (req.method === "POST" && req.url === "/graphql") void graphqlPost(req, res, options);
      else options.fallback(req, res);
    } catch (err) {
      // What Express did for a route that threw: an answer, never a crashed process.
      answerFailure(res, err, options.logger);
    }
  };
}

async function graphqlPost(req: RequestWithBody, res: ServerResponse, options: FrontDoorOptions) {
  try {
    await options.readBody(req, res);
    if (await options.graphqlPost(req, res)) return;
  } catch (err) {
    return answerFailure(res, err, options.logger);
  }
  options.fallback(req, res);
}
