import type { NextFunction, Request, Response } from "express";
import { inRequestScope, type Logger } from "../logger.js";
import { requestIdOf, type RequestInfo } from "../pipeline/request-info.js";

declare module "express-serve-static-core" {
  interface Request {
    /** Set by `accessLog` before any route runs; also sent back as `x-request-id`. */
    requestId?: string;
  }
}

/**
 * One access-log line per request (method, path, route, status, duration, client, request id), and
 * the request id on the response (`x-request-id`). Every other line written while the request is
 * handled carries the id too (`inRequestScope`). Headers, query strings and bodies are not logged:
 * they carry credentials, and GraphQL GET queries carry variables. Written by hand rather than with
 * pino-http: that builds a child logger and serialises the request on every request, which the
 * profile showed as the largest cost on the lookup path after the socket writes.
 */
export function accessLog(logger: Logger) {
  // The line's fields are fixed and hold no secret, so it skips the logger's redaction walk.
  const accessLogger = logger.child({}, { redact: [] });
  return (req: Request, res: Response, next: NextFunction) => {
    const started = performance.now();
    const requestId = requestIdOf(req);
    req.requestId = requestId;
    res.setHeader("x-request-id", requestId);
    // "close" comes after "finish", and also when the caller went away before the answer was sent.
    res.once("close", () => {
      const requestInfo = res.locals.requestInfo as RequestInfo | undefined;
      const line = {
        requestId,
        req: { method: req.method, path: req.originalUrl.split("?")[0] },
        res: { status: res.statusCode, ...(res.writableFinished ? {} : { aborted: true }) },
        route: req.route?.path as string | undefined,
        clientId: requestInfo?.clientId,
        durationMs: Math.round(performance.now() - started),
      };
      if (res.statusCode >= 500) accessLogger.error(line, "request completed");
      else accessLogger.info(line, "request completed");
    });
    inRequestScope(requestId, next);
  };
}
