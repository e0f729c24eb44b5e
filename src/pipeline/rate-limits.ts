import cluster from "node:cluster";
import type { Redis } from "ioredis";
import { RateLimiterCluster, RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import { AppError } from "../errors.js";

export type RateLimitSettings = {
  /** Operations per minute per client (all of its credentials together). */
  perClient: number;
  /** Operations per minute per IP address, whoever sends them. */
  perIp: number;
  /** Sign-in operations (OTP request and verify) per minute per IP address. */
  signInPerIp: number;
  /** Failed authentications per minute per IP address, on every transport; past them the address is blocked for the window. */
  authFailuresPerIp: number;
  /** Provider webhook calls per minute per IP address. */
  webhooksPerIp: number;
};

/**
 * The budgets every transport draws on: in memory per instance (the supervisor keeps them for all
 * its workers under WEB_CONCURRENCY, src/workers.ts), or shared by all instances through Redis when
 * REDIS_URL is set. An exhausted budget is RATE_LIMITED with the seconds until it refills.
 * While Redis cannot be reached, each instance counts in its own memory (the same budgets, per
 * instance) until Redis answers again: limits degrade, requests are neither refused nor held.
 */
export class RateLimits {
  private readonly perClient: RateLimiterAbstract;
  private readonly perIp: RateLimiterAbstract;
  private readonly signInPerIp: RateLimiterAbstract;
  private readonly webhooksPerIp: RateLimiterAbstract;
  private readonly authFailuresPerIp: RateLimiterAbstract;

  constructor(settings: RateLimitSettings, redis?: Redis) {
    const make = (points: number, keyPrefix: string): RateLimiterAbstract => {
      // This instance's own count: kept by the supervisor for all its workers (WEB_CONCURRENCY).
      const local = () =>
        cluster.isWorker ? new RateLimiterCluster({ points, duration: 60, keyPrefix, timeoutMs: 2000 }) : new RateLimiterMemory({ points, duration: 60, keyPrefix });
      return redis ? new RateLimiterRedis({ storeClient: redis, points, duration: 60, keyPrefix, insuranceLimiter: local() }) : local();
    };
    this.perClient = make(settings.perClient, "rl:client");
    this.perIp = make(settings.perIp, "rl:ip");
    this.signInPerIp = make(settings.signInPerIp, "rl:sign-in");
    this.webhooksPerIp = make(settings.webhooksPerIp, "rl:webhooks");
    this.authFailuresPerIp = make(settings.authFailuresPerIp, "rl:auth-failures");
  }

  ip(ip: string) {
    return consume(this.perIp, ip);
  }

  signIn(ip: string) {
    return consume(this.signInPerIp, ip);
  }

  client(clientId: string) {
    return consume(this.perClient, clientId);
  }

  webhook(ip: string) {
    return consume(this.webhooksPerIp, ip);
  }

  /** RATE_LIMITED while the address has used up its failed-authentication budget: it is blocked for the rest of the window. */
  async authenticationAllowed(ip: string): Promise<void> {
    const used = await this.authFailuresPerIp.get(ip);
    if (used && used.consumedPoints >= this.authFailuresPerIp.points) throw rateLimited(used);
  }

  /** One failed authentication from the address. */
  authenticationFailed(ip: string) {
    return consume(this.authFailuresPerIp, ip);
  }
}

async function consume(limiter: RateLimiterAbstract, key: string): Promise<void> {
  try {
    await limiter.consume(key);
  } catch (rejection) {
    if (!(rejection instanceof RateLimiterRes)) throw rejection;
    throw rateLimited(rejection);
  }
}

function rateLimited(state: RateLimiterRes): AppError {
  const retryAfter = Math.max(1, Math.ceil(state.msBeforeNext / 1000));
  return new AppError("RATE_LIMITED", "Too many requests; slow down", { retryAfter });
}
