import type { IncomingMessage, ServerResponse } from "node:http";
import type { Request } from "express";
import { pinoHttp } from "pino-http";
import type { NextFunction, Response } from "express";
import { inRequestScope, type Logger } from "../logger.js";
import { requestIdOf, type RequestInfo } from "../pipeline/request-info.js";

/**
 * One access-log line per request (method, route, status, duration, client, request id), and the
 * request id on the response (`x-request-id`). Headers, query strings and bodies are not logged:
 * they carry credentials, and GraphQL GET queries carry variables.
 */
export function accessLog(logger: Logger) {
  return pinoHttp({
    logger,
    genReqId: (req: IncomingMessage, res: ServerResponse) => {
      const id = requestIdOf(req);
      res.setHeader("x-request-id", id);
      return id;
    },
    customAttributeKeys: { responseTime: "durationMs" },
    serializers: {
      req: (req: { method: string; url: string }) => ({ method: req.method, path: req.url.split("?")[0] }),
      res: (res: { statusCode: number }) => ({ status: res.statusCode }),
    },
    customSuccessObject: (req, res, fields: Record<string, unknown>) => ({
      ...fields,
      requestId: req.id,
      route: (req as Request).route?.path,
      clientId: ((res as unknown as { locals?: { requestInfo?: RequestInfo } }).locals?.requestInfo)?.clientId,
    }),
    customErrorObject: (req, _res, _error, fields: Record<string, unknown>) => ({ ...fields, requestId: req.id, route: (req as Request).route?.path }),
    customSuccessMessage: () => "request completed",
    customLogLevel: (_req, res, error) => (error || res.statusCode >= 500 ? "error" : "info"),
  });
}

/** Every log line written while the request is handled carries its id (see `inRequestScope`). */
export function requestScope(req: Request, _res: Response, next: NextFunction) {
  inRequestScope(String(req.id), next);
}
