import { createHash } from "node:crypto";
import type { NextFunction, Request, Response } from "express";
import type { Redis } from "ioredis";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import { AppError } from "../errors.js";
import { sendError } from "./errors.js";

/**
 * Requests per minute per credential and per IP (the IP allowance is five credentials' worth, for
 * offices behind one address). In memory per instance, or shared through Redis when REDIS_URL is set.
 */
export function rateLimit(options: { perMinute: number; redis?: Redis }) {
  const make = (points: number, keyPrefix: string): RateLimiterAbstract =>
    options.redis
      ? new RateLimiterRedis({ storeClient: options.redis, points, duration: 60, keyPrefix })
      : new RateLimiterMemory({ points, duration: 60, keyPrefix });
  const perCredential = make(options.perMinute, "rl:credential");
  const perIp = make(options.perMinute * 5, "rl:ip");

  return async (req: Request, res: Response, next: NextFunction) => {
    const credential = req.get("x-client-auth") ?? req.get("x-api-key");
    try {
      await perIp.consume(req.ip ?? "unknown");
      if (credential) await perCredential.consume(createHash("sha256").update(credential).digest("base64url"));
      next();
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) return next(rejection);
      const retryAfter = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
      sendError(res, new AppError("RATE_LIMITED", "Too many requests; slow down", { retryAfter }));
    }
  };
}
