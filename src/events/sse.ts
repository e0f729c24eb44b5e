import { isAsyncIterable, map, pipe, type Plugin } from "graphql-yoga";
import { exactStringify } from "../exact-json.js";
import type { ClientEvent } from "./types.js";

const PING_MS = 12_000;

/** Per SSE request: the id of the log event whose payload is being produced. */
const cursors = new WeakMap<Request, { id?: string }>();

const requestOf = (ctx: object) => (ctx as { request?: Request }).request;

/** The Last-Event-ID header of an SSE (HTTP) subscription request; absent over websockets. */
export function lastEventIdOf(ctx: object): string | undefined {
  return requestOf(ctx)?.headers.get("last-event-id") ?? undefined;
}

/** Notes each event's id as it goes out, for the SSE `id:` line of the payload made from it. */
export function withSseCursor(ctx: object, events: AsyncIterable<ClientEvent>): AsyncIterable<ClientEvent> {
  const request = requestOf(ctx);
  if (!request) return events;
  const cursor: { id?: string } = {};
  cursors.set(request, cursor);
  return pipe(
    events,
    map((event: ClientEvent) => {
      cursor.id = event.id;
      return event;
    }),
  );
}

/**
 * Yoga's SSE writer has no `id:` lines; for subscriptions that read the event log this one writes
 * each payload with the id of its event, so a reconnecting EventSource resumes with Last-Event-ID.
 */
export function sseEventIds(): Plugin {
  return {
    onResultProcess({ request, result, setResultProcessor }) {
      const cursor = cursors.get(request);
      if (!cursor || !isAsyncIterable(result) || !(request.headers.get("accept") ?? "").includes("text/event-stream")) return;
      setResultProcessor((stream, fetchAPI) => {
        const encoder = new fetchAPI.TextEncoder();
        const iterator = (stream as AsyncIterable<unknown>)[Symbol.asyncIterator]();
        let ping: NodeJS.Timeout | undefined;
        const body = new fetchAPI.ReadableStream({
          start(controller) {
            controller.enqueue(encoder.encode(":\n\n"));
            ping = setInterval(() => {
              if (controller.desiredSize === null) clearInterval(ping);
              else controller.enqueue(encoder.encode(":\n\n"));
            }, PING_MS);
          },
          async pull(controller) {
            const next = await iterator.next();
            if (next.done) {
              clearInterval(ping);
              controller.enqueue(encoder.encode("event: complete\ndata:\n\n"));
              controller.close();
              return;
            }
            const id = cursor.id ? `id: ${cursor.id}\n` : "";
            controller.enqueue(encoder.encode(`${id}event: next\ndata: ${exactStringify(next.value)}\n\n`));
          },
          async cancel() {
            clearInterval(ping);
            await iterator.return?.();
          },
        });
        return new fetchAPI.Response(body, {
          status: 200,
          headers: { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive", "content-encoding": "none" },
        });
      }, "text/event-stream");
    },
  };
}
