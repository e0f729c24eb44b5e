/** Every event type a client can read in the feed, subscribe to, or receive at a webhook endpoint. */
export const EVENT_TYPES = [
  "user.created",
  "virtual_account.created",
  "deposit.created",
  "deposit.completed",
  "deposit.failed",
  "withdrawal.created",
  "withdrawal.completed",
  "withdrawal.failed",
  "conversion.completed",
  "card.transaction.created",
  "api_key.created",
  "api_key.revoked",
  "api_key.rolled",
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export const DEPOSIT_EVENT_TYPES = ["deposit.created", "deposit.completed", "deposit.failed"] as const satisfies readonly EventType[];

/** What a client sees of an event, on every surface and in webhook bodies. */
export type ClientEvent = { id: string; type: string; createdAt: string; data: { object: Record<string, unknown> } };
