import type { ServerResponse } from "node:http";
import type { NextFunction, Request, Response } from "express";
import type { GraphQLError } from "graphql";
import { AppError } from "../errors.js";
import { forRequest, maskError, toApiError } from "../graphql/errors.js";
import type { Logger } from "../logger.js";
import { restError, setPipelineHeaders } from "./respond.js";
import { exchangeOf } from "../http/exchange.js";
import { sendJson } from "../http/json.js";

/** Answers an error refused at the HTTP edge (before any operation) with the same mapping as the pipeline's. */
export function sendError(res: ServerResponse, error: AppError | GraphQLError) {
  const { requestId } = exchangeOf(res.req);
  const apiError = error instanceof AppError ? toApiError(error, undefined, requestId) : forRequest(error, requestId);
  setPipelineHeaders(res, { errors: [apiError] });
  const { status, body } = restError(apiError);
  sendJson(res, status, body);
}

export const notFoundRoute = (_req: Request, res: Response) => sendError(res, new AppError("NOT_FOUND", "No such route"));

/** Body-reading and routing failures, and anything thrown outside an operation. */
export function sendEdgeError(res: ServerResponse, err: unknown, logger: Logger) {
  const { type } = err as { type?: string };
  if (type === "entity.too.large") return sendError(res, new AppError("PAYLOAD_TOO_LARGE", "Request body is larger than 100 kB"));
  if (type === "entity.parse.failed") return sendError(res, new AppError("BAD_USER_INPUT", "Malformed JSON body"));
  // A body that does not inflate as its Content-Encoding says (zlib's codes are Z_…).
  if (type || /^Z_/.test(String((err as { code?: unknown }).code))) return sendError(res, new AppError("BAD_USER_INPUT", "Unreadable request body"));
  // A path segment that does not decode (`/v1/user/%E0%A4%A`).
  if (err instanceof URIError) return sendError(res, new AppError("BAD_USER_INPUT", "Malformed percent-encoding in the path"));
  sendError(res, maskError(err, logger, exchangeOf(res.req).requestId));
}

/** The edge's error answer, or a cut connection once the answer has begun. */
export function answerFailure(res: ServerResponse, err: unknown, logger: Logger) {
  if (res.headersSent) res.destroy(err instanceof Error ? err : undefined);
  else sendEdgeError(res, err, logger);
}

/** Express's last handler: the same answers for what its routes (the pages, webhooks, yoga's own path) throw. */
export function errorHandler(logger: Logger) {
  return (err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    sendEdgeError(res, err, logger);
  };
}
