import { Repeater } from "graphql-yoga";
import type { Sql } from "../db/sql.js";
import type { Events } from "../pubsub/events.js";
import { newestEventId, readLog } from "./log.js";
import type { ClientEvent } from "./types.js";

const PAGE = 100;
/**
 * After a nudge the log is read again for a while, at growing intervals: its event may be held
 * back behind an older transaction still open (the feed's visibility rule, see readLog).
 */
const RECHECK_FIRST_MS = 50;
const RECHECK_MAX_MS = 1000;
const RECHECK_WINDOW_MS = 10_000;
/** Without nudges (a NOTIFY lost while the listener reconnected): a slow poll. */
const SAFETY_POLL_MS = 5000;

export type TailOptions = {
  sql: Sql;
  /** The cross-instance bus: deposit announcements (published after commit) wake the reader. */
  bus: Events;
  clientId: string;
  userId?: string;
  types: readonly string[];
  /** Resume after this event id; without it, start after the newest event readable now. */
  after?: string;
  /** How often the log is read when no nudge comes (only deposits are announced on the bus). */
  pollMs?: number;
};

/**
 * A client's events as a live stream read from the log itself: replay after the cursor, then wait
 * for a nudge and read on from the last event sent. Everything sent comes from the log in log
 * order, so there is no seam between replay and live (no gap, no duplicate), and the id of the
 * last event received is always a valid cursor to resume from.
 */
export function tailLog(options: TailOptions): AsyncIterable<ClientEvent> {
  const { sql, bus, clientId, userId, types } = options;
  return new Repeater<ClientEvent>(async (push, stop) => {
    let stopped = false;
    let wake: (() => void) | undefined;
    let recheckUntil = 0;
    let recheckMs = RECHECK_FIRST_MS;
    let nudgeCount = 0;
    // Listening starts before the first read, so nothing committed meanwhile goes unnoticed.
    const nudges = bus.subscribe("deposit");
    const listening = (async () => {
      for await (const announcement of nudges) {
        if (announcement.clientId !== clientId) continue;
        recheckUntil = Date.now() + RECHECK_WINDOW_MS;
        recheckMs = RECHECK_FIRST_MS;
        nudgeCount++;
        wake?.();
      }
    })();
    void stop.then(() => {
      stopped = true;
      wake?.();
    });

    try {
      let cursor = options.after ?? (await newestEventId(sql, clientId));
      while (!stopped) {
        const nudgesBefore = nudgeCount;
        const page = await readLog(sql, { clientId, after: cursor, limit: PAGE, types, userId });
        for (const event of page.events) {
          if (stopped) break;
          await push(event);
          cursor = event.id;
        }
        // More to read, or a nudge that came during the read: read again at once.
        if (page.hasMore || stopped || nudgeCount !== nudgesBefore) continue;
        await new Promise<void>((resolve) => {
          const rechecking = Date.now() < recheckUntil;
          const timer = setTimeout(resolve, rechecking ? recheckMs : (options.pollMs ?? SAFETY_POLL_MS));
          if (rechecking) recheckMs = Math.min(recheckMs * 2, RECHECK_MAX_MS);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = undefined;
      }
    } finally {
      await nudges.return?.();
      await listening;
    }
  });
}
