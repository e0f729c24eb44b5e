/**
 * A GraphQL subscription over SSE from a browser. `EventSource` cannot send headers, so this reads
 * the stream with `fetch`, which can: the credential travels in `x-client-auth` (a session token from
 * the e-mail code sign-in; an API key stays on your server), never in a URL. After a dropped
 * connection it reconnects and resumes after the last event it saw (`Last-Event-ID`), as
 * `EventSource` would. It ends when the server completes the stream (the last result of a stream
 * whose credential ended is an UNAUTHENTICATED error saying why) or refuses it (401, 403, 429).
 *
 *   const stop = subscribe({
 *     url: "https://api.example.com/graphql",
 *     headers: { "x-client-auth": sessionToken },
 *     query: "subscription { depositUpdated { id status eventCursor } }",
 *     onNext: (result) => console.log(result.data ?? result.errors),
 *     onEnd: (end) => console.log("stream ended", end),
 *   });
 *
 * @param {{ url: string, query: string, variables?: object, headers?: Record<string, string>,
 *   onNext: (result: { data?: unknown, errors?: unknown[] }, id?: string) => void,
 *   onEnd?: (end: { complete: true } | { status: number, body: string }) => void,
 *   lastEventId?: string, retryMs?: number }} options
 * @returns {() => void} stops the subscription
 */
export function subscribe({ url, query, variables = {}, headers = {}, onNext, onEnd = () => {}, lastEventId, retryMs = 1000 }) {
  const abort = new AbortController();
  let last = lastEventId;
  const run = async () => {
    while (!abort.signal.aborted) {
      try {
        const response = await fetch(url, {
          method: "POST",
          signal: abort.signal,
          headers: { ...headers, accept: "text/event-stream", "content-type": "application/json", ...(last ? { "last-event-id": last } : {}) },
          body: JSON.stringify({ query, variables }),
        });
        if (!response.ok) return onEnd({ status: response.status, body: await response.text() });
        for await (const event of serverSentEvents(response.body)) {
          if (event.id) last = event.id;
          if (event.event === "complete") return onEnd({ complete: true });
          if (event.event === "next") onNext(JSON.parse(event.data), event.id);
        }
      } catch (error) {
        if (abort.signal.aborted) return;
      }
      // The connection dropped without `complete`: reconnect, resuming after the last event seen.
      await new Promise((resolve) => setTimeout(resolve, retryMs));
    }
  };
  run();
  return () => abort.abort();
}

/** The events of a `text/event-stream` body: `{event, data, id}` per blank-line-separated block. */
async function* serverSentEvents(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value.replace(/\r\n?/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = { event: "message", data: "", id: undefined };
      const data = [];
      for (const line of block.split("\n")) {
        const colon = line.indexOf(":");
        if (colon === 0) continue; // a comment (keep-alive)
        const field = colon < 0 ? line : line.slice(0, colon);
        const text = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "data") data.push(text);
        else if (field === "event") event.event = text;
        else if (field === "id") event.id = text;
      }
      event.data = data.join("\n");
      yield event;
    }
  }
}
