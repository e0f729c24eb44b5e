// `stripe listen` for this API: tails the client's event log and forwards each event to a local URL,
// signed as a webhook endpoint would sign it (the same body and headers: src/webhook-endpoints/message.ts).
//
//   API_KEY=fpk_… npm run listen -- --forward http://localhost:3000/hooks [--secret whsec_…] [--events deposit.completed,…]
//
// It reads the event feed (GET /v1/events) rather than registering an endpoint, so it works against
// any server, whose URL policy may refuse loopback destinations, and leaves nothing behind. It starts
// at the newest event (nothing older is replayed), forwards each event once (no retries: the line
// shows what the receiver answered), and stops on Ctrl-C.
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import type { ClientEvent } from "../src/events/types.js";
import { exactParse } from "../src/exact-json.js";
import { webhookMessage } from "../src/webhook-endpoints/message.js";
import { newSecret } from "../src/webhook-endpoints/secrets.js";
import { resolveWithDns } from "../src/webhook-endpoints/resolve-host.js";
import { postWebhook } from "../src/webhook-endpoints/sender.js";
import { ApiError, apiKey, BASE_URL, rest } from "./sandbox-api.js";

/** How often an idle feed is read again. */
const POLL_MS = 250;
/** As a webhook endpoint: a receiver answering later than this counts as no answer. */
const TIMEOUT_MS = 10_000;
const PAGE = 100;
/** The wait before reading again when the server did not answer. */
const RETRY_MS = 1_000;

const usage = "usage: npm run listen -- --forward <url> [--secret whsec_…] [--events type,type…]";

function options() {
  try {
    const { values } = parseArgs({ options: { forward: { type: "string" }, secret: { type: "string" }, events: { type: "string" } } });
    if (!values.forward) throw new Error("--forward is required");
    const forward = new URL(values.forward);
    if (forward.protocol !== "http:" && forward.protocol !== "https:") throw new Error("--forward must be an http or https URL");
    if (values.secret !== undefined && !/^whsec_[A-Za-z0-9+/]+={0,2}$/.test(values.secret)) throw new Error("--secret must be a whsec_… secret");
    return { forward: forward.href, secret: values.secret ?? newSecret(), types: values.events?.split(",").filter(Boolean) ?? [] };
  } catch (err) {
    process.stderr.write(`listen: ${err instanceof Error ? err.message : String(err)}\n${usage}\n`);
    process.exit(2);
  }
}

/** Sends one event as an endpoint would receive it; the receiver's status, or why there was none. */
async function forward(url: string, secret: string, event: ClientEvent): Promise<string> {
  const { headers, body } = webhookMessage(event, [secret]);
  try {
    return String(await postWebhook(url, headers, body, { resolveHost: resolveWithDns, strict: false, timeoutMs: TIMEOUT_MS }));
  } catch (err) {
    return `no answer (${err instanceof Error ? err.message : String(err)})`;
  }
}

async function main() {
  const key = apiKey("listen");
  const { forward: url, secret, types } = options();
  const stop = new AbortController();
  process.once("SIGINT", () => stop.abort());
  process.once("SIGTERM", () => stop.abort());

  const typeQuery = types.map((type) => `&type=${encodeURIComponent(type)}`).join("");
  let { cursor } = await rest<{ cursor: string | null }>(key, "GET", "/v1/events/cursor");
  process.stdout.write(`listening to ${BASE_URL}, forwarding events to ${url}\nwebhook signing secret ${secret}\n`);

  while (!stop.signal.aborted) {
    let page: { data: ClientEvent[]; hasMore: boolean };
    try {
      // Read exactly: each event is forwarded with the money's every digit, as the feed wrote it.
      page = await rest(key, "GET", `/v1/events?limit=${PAGE}${cursor ? `&after=${encodeURIComponent(cursor)}` : ""}${typeQuery}`, { signal: stop.signal, parse: exactParse });
    } catch (err) {
      if (stop.signal.aborted) break;
      // Refused (a bad key, --events): stop. Unreachable, restarting, overloaded: read on from the same cursor once it answers.
      if (err instanceof ApiError && err.status < 500 && err.status !== 429) throw err;
      process.stderr.write(`listen: ${BASE_URL} did not answer (${err instanceof Error ? err.message : String(err)}); retrying\n`);
      await sleep(RETRY_MS, undefined, { signal: stop.signal }).catch(() => undefined);
      continue;
    }
    // Each event is forwarded to the end, even after Ctrl-C: no line is left half-done.
    for (const event of page.data) {
      const status = await forward(url, secret, event);
      process.stdout.write(`${new Date().toISOString()}  ${event.type.padEnd(28)} ${event.id}  → ${status}\n`);
      cursor = event.id;
      if (stop.signal.aborted) break;
    }
    if (!page.hasMore) await sleep(POLL_MS, undefined, { signal: stop.signal }).catch(() => undefined);
  }
  process.stdout.write("stopped\n");
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`listen failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
