import cluster from "node:cluster";
import type { Redis } from "ioredis";
import type { Counter } from "prom-client";
import { RateLimiterCluster, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import { AppError } from "../errors.js";
import type { Logger } from "../logger.js";
import { FallbackLimiter } from "./limiter-fallback.js";

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

/** What a budget is asked: RateLimiterMemory's calls (a rejection with a RateLimiterRes is an exhausted budget). */
type Budget = { points: number; consume(key: string): Promise<unknown>; get(key: string): Promise<RateLimiterRes | null> };

/** Where the calls a shared store did not answer are reported: a counter per budget, and a log line at most once a minute. */
export type LimiterOutageReport = { fallbacks: Counter<"budget">; logger: Logger };

const OUTAGE_LOG_EVERY_MS = 60_000;
/** Blocked addresses remembered at most; past it, those whose window ended go, then the oldest (only a round trip is lost). */
const MAX_KNOWN_BLOCKED = 10_000;

/**
 * The budgets every transport draws on: in memory per instance (the supervisor keeps them for all
 * its workers under WEB_CONCURRENCY, src/workers.ts), or shared by all instances through Redis when
 * REDIS_URL is set. An exhausted budget is RATE_LIMITED with the seconds until it refills.
 * While Redis cannot be reached, each instance counts in its own memory (the same budgets, per
 * instance) until Redis answers again: limits degrade, requests are neither refused nor held.
 * A limiter that cannot answer never fails a request: when the supervisor does not answer in time
 * (a loaded machine, a restart), or neither Redis nor the supervisor does, the worker counts in its
 * own memory (FallbackLimiter), counts it in `rate_limiter_fallbacks_total{budget}` and says so in
 * the log at most once a minute.
 */
export class RateLimits {
  private readonly perClient: Budget;
  private readonly perIp: Budget;
  private readonly signInPerIp: Budget;
  private readonly webhooksPerIp: Budget;
  private readonly authFailuresPerIp: Budget;
  /** Addresses seen blocked by the failed-authentication budget, until their window ends. */
  private readonly blockedUntil = new Map<string, number>();
  private outageLoggedAt = -Infinity;
  private fallbacksSinceLog = 0;

  constructor(settings: RateLimitSettings, redis?: Redis, outage?: LimiterOutageReport) {
    const make = (points: number, keyPrefix: string): Budget => {
      // This instance's own count: kept by the supervisor for all its workers (WEB_CONCURRENCY).
      const local = () =>
        cluster.isWorker ? new RateLimiterCluster({ points, duration: 60, keyPrefix, timeoutMs: 2000 }) : new RateLimiterMemory({ points, duration: 60, keyPrefix });
      if (!redis && !cluster.isWorker) return local();
      const shared = redis ? new RateLimiterRedis({ storeClient: redis, points, duration: 60, keyPrefix, insuranceLimiter: local() }) : local();
      const budget = keyPrefix.replace(/^rl:/, "");
      return new FallbackLimiter(shared, (err) => this.fellBack(budget, err, outage));
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
    if (used && used.consumedPoints >= this.authFailuresPerIp.points) throw this.blocked(ip, used);
  }

  /**
   * RATE_LIMITED, without asking the budget's store, for an address this process has seen blocked
   * and whose window has not ended (the store would say the same: a blocked address stays blocked
   * for its window). Every other address is asked about in the store (`authenticationAllowed`).
   */
  refuseKnownBlocked(ip: string): void {
    const until = this.blockedUntil.get(ip);
    if (until === undefined) return;
    const msBeforeNext = until - Date.now();
    if (msBeforeNext > 0) throw rateLimited({ msBeforeNext });
    this.blockedUntil.delete(ip);
  }

  /** One failed authentication from the address. */
  async authenticationFailed(ip: string): Promise<void> {
    try {
      await this.authFailuresPerIp.consume(ip);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      throw this.blocked(ip, rejection);
    }
  }

  /** The refusal of a blocked address, remembered until its window ends (at most MAX_KNOWN_BLOCKED addresses). */
  private blocked(ip: string, state: RateLimiterRes): AppError {
    const now = Date.now();
    if (this.blockedUntil.size >= MAX_KNOWN_BLOCKED) {
      for (const [known, until] of this.blockedUntil) if (until <= now) this.blockedUntil.delete(known);
      for (const known of this.blockedUntil.keys()) {
        if (this.blockedUntil.size < MAX_KNOWN_BLOCKED) break;
        this.blockedUntil.delete(known);
      }
    }
    this.blockedUntil.set(ip, now + state.msBeforeNext);
    return rateLimited(state);
  }

  private fellBack(budget: string, err: unknown, outage: LimiterOutageReport | undefined) {
    outage?.fallbacks.inc({ budget });
    this.fallbacksSinceLog++;
    const now = Date.now();
    if (!outage || now - this.outageLoggedAt < OUTAGE_LOG_EVERY_MS) return;
    outage.logger.warn(
      { err, budget, fallbacks: this.fallbacksSinceLog },
      "the shared rate limiter did not answer: counting in this process's memory (logged at most once a minute)",
    );
    this.outageLoggedAt = now;
    this.fallbacksSinceLog = 0;
  }
}

async function consume(limiter: Budget, key: string): Promise<void> {
  try {
    await limiter.consume(key);
  } catch (rejection) {
    if (!(rejection instanceof RateLimiterRes)) throw rejection;
    throw rateLimited(rejection);
  }
}

function rateLimited(state: Pick<RateLimiterRes, "msBeforeNext">): AppError {
  const retryAfter = Math.max(1, Math.ceil(state.msBeforeNext / 1000));
  return new AppError("RATE_LIMITED", "Too many requests; slow down", { retryAfter });
}
