import { allows, forbidden, permissionOf, type Permission, type Permissions, type Resource } from "../caller/permissions.js";

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
  "withdrawal.cancelled",
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

/**
 * The resource each event type shows in its `data.object` (SPEC §13: what shows a resource needs
 * that resource's read permission). A restricted key reads, streams and sends to its webhook
 * endpoints only the event types whose resource it may read; `events:read` alone shows none.
 */
export const EVENT_RESOURCES = {
  "user.created": "users",
  "user.updated": "users",
  "virtual_account.created": "accounts",
  "deposit.created": "deposits",
  "deposit.completed": "deposits",
  "deposit.failed": "deposits",
  "withdrawal.created": "withdrawals",
  "withdrawal.processing": "withdrawals",
  "withdrawal.completed": "withdrawals",
  "withdrawal.failed": "withdrawals",
  "withdrawal.returned": "withdrawals",
  "withdrawal.cancelled": "withdrawals",
  "conversion.completed": "conversions",
  "card.transaction.created": "cards",
  "card.authorization.created": "cards",
  "card.authorization.captured": "cards",
  "card.authorization.reversed": "cards",
  "card.authorization.expired": "cards",
  "api_key.created": "api_keys",
  "api_key.revoked": "api_keys",
  "api_key.rolled": "api_keys",
} as const satisfies Record<EventType, Resource>;

/** The permission reading an event of this type needs (`users:read` for user.created). */
export const eventPermission = (type: EventType): Permission => permissionOf(EVENT_RESOURCES[type], "read");

/** A 403 naming the permission of the first of `types` the grants (null: full access) do not let the caller read. */
export function assertReadable(grants: Permissions | null, types: readonly EventType[]): void {
  const refused = types.find((type) => !allows(grants, eventPermission(type)));
  if (refused) throw forbidden(eventPermission(refused));
}

/**
 * The event types a read (feed, event stream) covers: `wanted`, every type when it is empty (`[]`:
 * a full credential without a filter). A restricted key asking for a type it may not read is
 * refused (403 naming the permission); asking for none gets the types it may read, and a 403
 * naming the first permission when it may read none.
 */
export function readableEventTypes(grants: Permissions | null, wanted: readonly EventType[]): readonly EventType[] {
  assertReadable(grants, wanted);
  if (grants === null || wanted.length) return wanted;
  const readable = EVENT_TYPES.filter((type) => allows(grants, eventPermission(type)));
  if (!readable.length) throw forbidden(eventPermission(EVENT_TYPES[0]));
  return readable;
}

export const DEPOSIT_EVENT_TYPES = ["deposit.created", "deposit.completed", "deposit.failed"] as const satisfies readonly EventType[];

/** What a client sees of an event, on every surface and in webhook bodies. */
/** `livemode`: the mode of the tenant it happened in (SPEC §15); its object carries the same. */
export type ClientEvent = { id: string; type: string; createdAt: string; livemode: boolean; data: { object: Record<string, unknown> } };
