import { RateLimiterMemory, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";

/**
 * Once the shared store has failed to answer, it is not asked again for this long: every call would
 * otherwise wait out its whole time-out (2 s for the supervisor) before counting locally.
 */
const ASK_SHARED_AGAIN_AFTER_MS = 5_000;

/**
 * A budget kept in a shared store (the supervisor of WEB_CONCURRENCY workers, or Redis with the
 * supervisor as its insurance) that never fails a request because that store cannot answer: a call it
 * does not answer (a time-out, a lost connection) is counted in this process's own memory instead,
 * with the same points, and `onFallback` is told. An exhausted budget (RateLimiterRes) is the store's
 * answer and goes through as is.
 */
export class FallbackLimiter {
  private readonly local: RateLimiterMemory;
  private askSharedAt = 0;

  constructor(
    private readonly shared: RateLimiterAbstract,
    private readonly onFallback: (err?: unknown) => void,
  ) {
    this.local = new RateLimiterMemory({ points: shared.points, duration: shared.duration, keyPrefix: shared.keyPrefix });
  }

  get points(): number {
    return this.shared.points;
  }

  consume(key: string): Promise<RateLimiterRes> {
    return this.answer((limiter) => limiter.consume(key));
  }

  get(key: string): Promise<RateLimiterRes | null> {
    return this.answer((limiter) => limiter.get(key));
  }

  private async answer<T>(call: (limiter: RateLimiterAbstract) => Promise<T>): Promise<T> {
    if (Date.now() >= this.askSharedAt) {
      try {
        return await call(this.shared);
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) throw rejection;
        this.askSharedAt = Date.now() + ASK_SHARED_AGAIN_AFTER_MS;
        this.onFallback(rejection);
        return call(this.local);
      }
    }
    this.onFallback();
    return call(this.local);
  }
}
