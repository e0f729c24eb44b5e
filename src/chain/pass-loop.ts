const MAX_BACKOFF_MS = 30_000;

export type PassLoopOptions = {
  pollMs: number;
  /** One pass; a throw counts as a failure. */
  pass(): Promise<void>;
  /** After a pass that succeeded; `afterFailures` is how many failed in a row before it. */
  succeeded(afterFailures: number): void;
  /** After a pass that failed, the `failures`-th in a row. */
  failed(err: unknown, failures: number): void;
};

/**
 * The rhythm of a chain worker (a watcher, a sender): a pass every `pollMs`, counted from the start
 * of one to the next; at once when nudged (or right after the pass running); after failures, an
 * exponential back-off up to 30 s, so a dead RPC costs a slow loop and never a request.
 */
export class PassLoop {
  private timer?: NodeJS.Timeout;
  private running: Promise<void> = Promise.resolve();
  private stopped = true;
  private busy = false;
  private again = false;
  private failures = 0;

  constructor(private readonly options: PassLoopOptions) {}

  start() {
    this.stopped = false;
    this.schedule(0);
  }

  /** No pass after the one running, which is waited for. */
  async stop() {
    this.halt();
    await this.running;
  }

  /** From within a pass: no pass after this one. */
  halt() {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  get halted() {
    return this.stopped;
  }

  nudge() {
    if (this.stopped) return;
    if (this.busy) this.again = true;
    else this.schedule(0);
  }

  private schedule(delayMs: number) {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      const started = Date.now();
      this.busy = true;
      this.again = false;
      this.running = this.options
        .pass()
        .then(() => {
          this.options.succeeded(this.failures);
          this.failures = 0;
        })
        .catch((err) => this.options.failed(err, ++this.failures))
        .finally(() => {
          this.busy = false;
          if (this.stopped) return;
          const { pollMs } = this.options;
          if (this.failures > 0) this.schedule(Math.min(MAX_BACKOFF_MS, pollMs * 2 ** Math.min(this.failures, 10)));
          else this.schedule(this.again ? 0 : Math.max(0, pollMs - (Date.now() - started)));
        });
    }, delayMs);
    this.timer.unref();
  }
}
