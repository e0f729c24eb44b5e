import type { Logger } from "../logger.js";
import type { CardAuthorizationService } from "./authorizations.js";

const BATCH = 100;
/** How often due authorizations are looked for: every second, or sooner when they live less long. */
const MAX_POLL_MS = 1000;
const MIN_POLL_MS = 50;

/**
 * Expires PENDING card authorizations once past their `expiresAt`, releasing their holds. Every
 * instance polls; an advisory lock lets one of them work at a time, the others skip their turn.
 */
export class CardAuthorizationExpiry {
  private timer?: NodeJS.Timeout;
  private running: Promise<void> = Promise.resolve();
  private stopped = false;
  private readonly pollMs: number;

  constructor(private readonly deps: { authorizations: CardAuthorizationService; ttlMs: number; logger: Logger }) {
    this.pollMs = Math.max(MIN_POLL_MS, Math.min(MAX_POLL_MS, Math.floor(deps.ttlMs / 2)));
  }

  start() {
    this.stopped = false;
    this.schedule();
  }

  async stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** Expires every authorization due at `now`, batch by batch; the number expired, or null when another instance is at it. */
  async runOnce(now = new Date()): Promise<number | null> {
    let total = 0;
    for (;;) {
      const expired = await this.deps.authorizations.expireDue(now, BATCH);
      if (expired === null) return total || null;
      total += expired;
      if (expired < BATCH || this.stopped) return total;
    }
  }

  private schedule() {
    this.timer = setTimeout(() => {
      this.running = this.runOnce()
        .then((expired) => {
          if (expired) this.deps.logger.info({ expired }, "card authorizations expired");
        })
        .catch((err) => this.deps.logger.error({ err }, "card authorization expiry failed"))
        .finally(() => {
          if (!this.stopped) this.schedule();
        });
    }, this.pollMs);
    this.timer.unref();
  }
}
