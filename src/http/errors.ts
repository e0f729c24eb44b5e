import type { NextFunction, Request, Response } from "express";
import { AppError } from "../errors.js";
import type { Logger } from "../logger.js";
import { restError } from "../rest/respond.js";

/** Answers an error as JSON, the same way on /v1 and on /graphql's HTTP edge. */
export function sendError(res: Response, error: AppError) {
  if (error.retryAfter) res.setHeader("Retry-After", String(error.retryAfter));
  res.status(error.status).json({ error: error.message });
}

export const notFoundRoute = (_req: Request, res: Response) =>
  sendError(res, new AppError("NOT_FOUND", "No such route"));

/** Body-parser failures and anything thrown outside a resolver. */
export function errorHandler(logger: Logger) {
  return (err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    const type = (err as { type?: string }).type;
    if (type === "entity.too.large") return sendError(res, new AppError("PAYLOAD_TOO_LARGE", "Request body is larger than 100 kB"));
    if (type === "entity.parse.failed") return sendError(res, new AppError("BAD_USER_INPUT", "Malformed JSON body"));
    if (type) return sendError(res, new AppError("BAD_USER_INPUT", "Unreadable request body"));
    const { status, body } = restError(err, logger);
    res.status(status).json(body);
  };
}
