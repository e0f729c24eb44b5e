/** Every event type a client can read in the feed, subscribe to, or receive at a webhook endpoint. */
export const EVENT_TYPES = [
  "user.created",
  "user.updated",
  "virtual_account.created",
  "deposit.created",
  "deposit.completed",
  "deposit.failed",
  "withdrawal.created",
  "withdrawal.processing",
  "withdrawal.completed",
  "withdrawal.failed",
  "withdrawal.returned",
  "conversion.completed",
  "card.transaction.created",
  "card.authorization.created",
  "card.authorization.captured",
  "card.authorization.reversed",
  "card.authorization.expired",
  "api_key.created",
  "api_key.revoked",
  "api_key.rolled",
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export const DEPOSIT_EVENT_TYPES = ["deposit.created", "deposit.completed", "deposit.failed"] as const satisfies readonly EventType[];

/** What a client sees of an event, on every surface and in webhook bodies. */
export type ClientEvent = { id: string; type: string; createdAt: string; data: { object: Record<string, unknown> } };
