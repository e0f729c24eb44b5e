import { Repeater } from "graphql-yoga";
import type { Sql } from "../db/sql.js";
import type { Logger } from "../logger.js";
import type { Events } from "../pubsub/events.js";
import type { EventIds } from "./ids.js";
import { comparePositions, LOG_START, newestEventId, newestPosition, positionOf, readLog, readTail, type Position, type TailRow } from "./log.js";
import type { ClientEvent } from "./types.js";

const PAGE = 100;
/**
 * After a nudge the log is read again for a while, at growing intervals: its event may be held
 * back behind an older transaction still open (the feed's visibility rule, see readLog).
 */
const RECHECK_FIRST_MS = 50;
const RECHECK_MAX_MS = 1000;
const RECHECK_WINDOW_MS = 10_000;
/** Without a nudge (only deposits are announced on the bus, and a NOTIFY can be lost): how often the log is read. */
const POLL_MS = 1000;
/**
 * Live events a subscription may have waiting for its client. One that falls further behind stops
 * taking them and reads on from the log (its replay), so a slow client costs memory only up to this.
 */
const INBOX_LIMIT = 1000;

export type TailFilter = { clientId: string; userId?: string; types: readonly string[] };

/** One subscription's queue of live events from the shared reader. */
class Inbox {
  private readonly queue: { event: ClientEvent; position: Position }[] = [];
  private waiter?: () => void;
  /** Set when the queue overflowed or the subscription ended: the reader stops filling it. */
  closed = false;

  constructor(
    private readonly filter: TailFilter,
    private readonly ids: EventIds,
    private readonly limit: number,
  ) {}

  offer(row: TailRow, position: Position) {
    if (this.closed || row.clientId !== this.filter.clientId) return;
    if (this.filter.userId !== undefined && row.userId !== this.filter.userId) return;
    if (this.filter.types.length && !this.filter.types.includes(row.type)) return;
    if (this.queue.length >= this.limit) this.closed = true;
    else this.queue.push({ event: this.ids.clientEvent(row.clientId, row), position });
    this.wake();
  }

  close() {
    this.closed = true;
    this.wake();
  }

  /** The next queued event; undefined once closed and drained. */
  async next(): Promise<{ event: ClientEvent; position: Position } | undefined> {
    while (!this.queue.length && !this.closed) await new Promise<void>((resolve) => (this.waiter = resolve));
    return this.queue.shift();
  }

  private wake() {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.();
  }
}

export type EventTailOptions = { sql: Sql; bus: Events; ids: EventIds; logger: Logger; inboxLimit?: number };

/**
 * The one reader of the event log per instance, for every live subscription: it reads every
 * client's new events once (woken by the bus after a commit, else every POLL_MS) and hands each to
 * the subscriptions whose filter it matches, in memory. It runs only while a subscription is open,
 * so idle subscriptions cost the database one read per wake-up however many there are.
 */
export class EventTail {
  private readonly inboxes = new Set<Inbox>();
  /** While the reader runs: the position up to which it has handed events out. */
  private head?: Position;
  private started?: Promise<void>;
  private wake?: () => void;
  private nudgeCount = 0;
  private recheckUntil = 0;
  private recheckMs = RECHECK_FIRST_MS;

  constructor(private readonly options: EventTailOptions) {}

  /**
   * A client's events as a live stream: those after `after` (the newest readable now when omitted)
   * replayed from the log, then live from the shared reader, in log order, without gap or repeat.
   * The id of the last event received is always a valid cursor to resume from.
   */
  stream(filter: TailFilter, after?: Position): AsyncIterable<ClientEvent> {
    return new Repeater<ClientEvent>(async (push, stop) => {
      let stopped = false;
      let inbox: Inbox | undefined;
      void stop.then(() => {
        stopped = true;
        inbox?.close();
      });
      const newest = after ? undefined : await newestEventId(this.options.sql, filter.clientId);
      let cursor = after ?? (newest === undefined ? LOG_START : (positionOf(newest) as Position));
      while (!stopped) {
        inbox = new Inbox(filter, this.options.ids, this.options.inboxLimit ?? INBOX_LIMIT);
        try {
          // Every event after `head` reaches the inbox; those up to it come from the log.
          const head = await this.attach(inbox);
          while (!stopped && comparePositions(cursor, head) < 0) {
            const page = await readLog(this.options.sql, { ...filter, after: cursor, upTo: head, limit: PAGE });
            for (const row of page.rows) {
              if (stopped) break;
              await push(this.options.ids.clientEvent(filter.clientId, row));
              cursor = positionOf(row.id) as Position;
            }
            if (!page.hasMore) cursor = head;
          }
          for (let next = await inbox.next(); next && !stopped; next = await inbox.next()) {
            if (comparePositions(next.position, cursor) <= 0) continue;
            await push(next.event);
            cursor = next.position;
          }
        } finally {
          inbox.close();
          this.inboxes.delete(inbox);
          // The last one gone: the reader stops now rather than at its next wake-up.
          if (!this.inboxes.size) this.wake?.();
        }
        // The inbox overflowed: read on from the log.
      }
    });
  }

  /** Adds an inbox to the reader (starting it if need be); resolves with the reader's head. */
  private async attach(inbox: Inbox): Promise<Position> {
    this.inboxes.add(inbox);
    this.started ??= this.start();
    try {
      await this.started;
    } catch (err) {
      this.inboxes.delete(inbox);
      throw err;
    }
    return this.head as Position;
  }

  private async start(): Promise<void> {
    // Listening starts before the first read, so nothing committed meanwhile waits for the poll.
    const nudges = this.options.bus.subscribe("deposit");
    try {
      this.head = await newestPosition(this.options.sql);
    } catch (err) {
      this.started = undefined;
      await nudges.return?.();
      throw err;
    }
    void (async () => {
      for await (const _ of nudges) {
        this.recheckUntil = Date.now() + RECHECK_WINDOW_MS;
        this.recheckMs = RECHECK_FIRST_MS;
        this.nudgeCount++;
        this.wake?.();
      }
    })();
    void this.run().finally(() => nudges.return?.());
  }

  /** Reads and hands out until no inbox is left. */
  private async run() {
    while (this.inboxes.size) {
      const nudgesBefore = this.nudgeCount;
      let rows: TailRow[] = [];
      try {
        rows = await readTail(this.options.sql, this.head as Position, PAGE);
      } catch (err) {
        this.options.logger.warn({ err }, "events tail could not read the log; retrying");
      }
      for (const row of rows) {
        const position = { xid: BigInt(row.xid), seq: BigInt(row.seq) };
        this.head = position;
        for (const inbox of this.inboxes) inbox.offer(row, position);
      }
      // More to read, or a nudge that came during the read: read again at once.
      if (rows.length === PAGE || this.nudgeCount !== nudgesBefore) continue;
      await this.sleep();
    }
    // No await between the loop's last check and here: an inbox added later starts a new reader.
    this.started = undefined;
    this.head = undefined;
  }

  private sleep() {
    const rechecking = Date.now() < this.recheckUntil;
    const ms = rechecking ? this.recheckMs : POLL_MS;
    if (rechecking) this.recheckMs = Math.min(this.recheckMs * 2, RECHECK_MAX_MS);
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    }).finally(() => (this.wake = undefined));
  }
}
