import type { PrismaClient } from "../generated/prisma/client.js";
import type { Logger } from "../logger.js";

/** lastUsedAt is written at most once a minute per key. */
export const LAST_USED_RESOLUTION_MS = 60_000;
/** How long noted uses wait, so that they are written together and never while a request waits. */
const FLUSH_DELAY_MS = 1000;

/**
 * Writes keys' lastUsedAt off the request path: a verification notes a use in memory (no I/O), and
 * the uses noted within FLUSH_DELAY_MS are written in one statement afterwards. The statement only
 * moves a lastUsedAt that is at least LAST_USED_RESOLUTION_MS old, so however many instances note
 * uses of a key, its row changes at most once a minute.
 */
export class LastUseRecorder {
  private readonly pending = new Map<string, Date>();
  private timer?: NodeJS.Timeout;
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly deps: { prisma: PrismaClient; logger?: Logger }) {}

  /** Whether a key last marked used at `lastUsedAt` is due to be marked again. */
  static isDue(lastUsedAt: Date | null, now: Date): boolean {
    return !lastUsedAt || now.getTime() - lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS;
  }

  note(keyId: string, at: Date) {
    if (this.pending.has(keyId)) return;
    this.pending.set(keyId, at);
    if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), FLUSH_DELAY_MS);
      this.timer.unref();
    }
  }

  /** Writes what is noted now (the server calls it when it stops, so no use is lost). */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.size === 0) return this.writing;
    const uses = [...this.pending];
    this.pending.clear();
    this.writing = this.writing.then(() => this.write(uses));
    return this.writing;
  }

  private async write(uses: [string, Date][]) {
    const ids = uses.map(([id]) => id);
    const times = uses.map(([, at]) => at.toISOString());
    try {
      await this.deps.prisma.$executeRaw`
        UPDATE "api_keys" AS k SET "lastUsedAt" = u.at
        FROM unnest(${ids}::uuid[], ${times}::timestamptz[]) AS u(id, at)
        WHERE k."id" = u.id AND (k."lastUsedAt" IS NULL OR k."lastUsedAt" <= u.at - ${LAST_USED_RESOLUTION_MS} * interval '1 millisecond')`;
    } catch (err) {
      this.deps.logger?.warn({ err, keys: ids.length }, "could not record API keys' last use");
    }
  }
}
