import { afterEach } from "vitest";
import { createClient } from "graphql-ws";
import WebSocket from "ws";
import { patient } from "./patience.js";

/** `sseId`: the `id:` line of the SSE message that carried it. */
export type SubscriptionResult = { data?: any; errors?: { message: string; extensions?: { code?: string } }[]; sseId?: string };

/** A live subscription seen from the client: results queue up until the test takes them. */
export type Subscriber = {
  /** The next result, or a rejection after `timeoutMs`. */
  take(timeoutMs?: number): Promise<SubscriptionResult>;
  /** Resolves if no result arrives within `ms`; rejects with the result otherwise. */
  nothingWithin(ms: number): Promise<void>;
  /** Resolves when the server ends the subscription or refuses it (with the reason, if any). */
  readonly ended: Promise<unknown>;
  close(): void;
};

/** Time for a just-opened subscription to reach the server's event bus (no protocol acknowledges it). */
export const SUBSCRIBE_SETTLE_MS = 300;

/** Waits SUBSCRIBE_SETTLE_MS. */
export const settle = () => new Promise((resolve) => setTimeout(resolve, SUBSCRIBE_SETTLE_MS));

/**
 * A test file's subscriptions: every one is closed after its test; `ws` and `sse` also wait until it
 * has reached the server's event bus. `baseUrl` is read when subscribing (servers start in beforeAll).
 */
export function subscriptionsOf(baseUrl: () => string) {
  const open: Subscriber[] = [];
  afterEach(() => open.splice(0).forEach((subscriber) => subscriber.close()));
  const track = <T extends Subscriber>(subscriber: T) => {
    open.push(subscriber);
    return subscriber;
  };
  const settled = async <T extends Subscriber>(subscriber: T) => {
    track(subscriber);
    await settle();
    return subscriber;
  };
  return {
    track,
    ws: (connectionParams: Record<string, unknown>, query: string, variables?: Record<string, unknown>) =>
      settled(subscribeWs(baseUrl(), connectionParams, query, variables)),
    sse: async (headers: Record<string, string>, query: string, variables?: Record<string, unknown>) =>
      settled(await subscribeSse(baseUrl(), headers, query, variables)),
  };
}

class Inbox {
  private readonly results: SubscriptionResult[] = [];
  private waiter?: (result: SubscriptionResult) => void;

  push(result: SubscriptionResult) {
    if (this.waiter) {
      const waiter = this.waiter;
      this.waiter = undefined;
      waiter(result);
    } else this.results.push(result);
  }

  take(timeoutMs = 5000): Promise<SubscriptionResult> {
    return this.next(patient(timeoutMs));
  }

  /** The next result, or a rejection after `timeoutMs` as given. */
  private next(timeoutMs: number): Promise<SubscriptionResult> {
    const queued = this.results.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = undefined;
        reject(new Error(`no subscription result within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiter = (result) => {
        clearTimeout(timer);
        resolve(result);
      };
    });
  }

  async nothingWithin(ms: number): Promise<void> {
    const result = await this.next(ms).catch(() => undefined);
    if (result) throw new Error(`unexpected subscription result: ${JSON.stringify(result)}`);
  }
}

const wsUrl = (baseUrl: string) => `${baseUrl.replace(/^http/, "ws")}/graphql`;

/** A subscription over graphql-ws, credentials in connection_init. */
export function subscribeWs(
  baseUrl: string,
  connectionParams: Record<string, unknown>,
  query: string,
  variables: Record<string, unknown> = {},
): Subscriber {
  const inbox = new Inbox();
  const client = createClient({ url: wsUrl(baseUrl), webSocketImpl: WebSocket, connectionParams, retryAttempts: 0, lazy: true });
  const ended = new Promise<unknown>((resolve) => {
    client.subscribe({ query, variables }, { next: (result) => inbox.push(result as SubscriptionResult), error: resolve, complete: () => resolve(undefined) });
  });
  return {
    take: (timeoutMs) => inbox.take(timeoutMs),
    nothingWithin: (ms) => inbox.nothingWithin(ms),
    ended,
    close: () => void client.dispose(),
  };
}

/** A subscription over server-sent events: POST /graphql with Accept: text/event-stream. */
export async function subscribeSse(
  baseUrl: string,
  headers: Record<string, string>,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<Subscriber & { status: number }> {
  const inbox = new Inbox();
  const abort = new AbortController();
  const response = await fetch(`${baseUrl}/graphql`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify({ query, variables }),
    signal: abort.signal,
  });
  const ended = readEvents(response, (result) => inbox.push(result)).catch((err: unknown) => err);
  return {
    status: response.status,
    take: (timeoutMs) => inbox.take(timeoutMs),
    nothingWithin: (ms) => inbox.nothingWithin(ms),
    ended,
    close: () => abort.abort(),
  };
}

/** Reads `event: next` / `data: …` blocks (blank-line separated) until the stream ends. */
async function readEvents(response: Response, onResult: (result: SubscriptionResult) => void): Promise<void> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const lines = block.split("\n");
      const event = lines.find((line) => line.startsWith("event:"))?.slice(6).trim() ?? "message";
      const data = lines.filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trim()).join("\n");
      const id = lines.find((line) => line.startsWith("id:"))?.slice(3).trim();
      if (event === "complete") return;
      if (data) onResult({ ...(JSON.parse(data) as SubscriptionResult), ...(id ? { sseId: id } : {}) });
    }
  }
}
