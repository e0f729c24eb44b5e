import type { ClientEvent } from "../events/types.js";
import { exactStringify } from "../exact-json.js";
import { signatureHeader } from "./secrets.js";

/** One webhook request: the headers and the raw body a receiver verifies. */
export type WebhookMessage = { headers: Record<string, string>; body: string };

/**
 * What an endpoint receives for an event: the event JSON `{id, type, createdAt, livemode, data}`, signed the
 * Standard Webhooks way with each secret (`webhook-id` is the event id, so every delivery of one
 * event carries the same one). `npm run listen` forwards with this too, so what it sends is exactly
 * what an endpoint would get. Money is written with every digit, as REST shows it (exactStringify).
 */
export function webhookMessage(event: ClientEvent, secrets: readonly string[], timestamp = new Date()): WebhookMessage {
  const body = exactStringify({ id: event.id, type: event.type, createdAt: event.createdAt, livemode: event.livemode, data: event.data });
  return {
    body,
    headers: {
      "content-type": "application/json",
      "user-agent": "fintech-platform-webhooks/1",
      "webhook-id": event.id,
      "webhook-timestamp": String(Math.floor(timestamp.getTime() / 1000)),
      "webhook-signature": signatureHeader(secrets, event.id, timestamp, body),
    },
  };
}
