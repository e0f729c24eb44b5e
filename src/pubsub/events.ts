import { createPubSub, type PubSub } from "graphql-yoga";

/** A deposit was created or changed state (published after the change has committed). */
export type DepositEvent = { clientId: string; userId: string; depositId: string; status: string };

/** An API key was revoked or a session logged out: instances drop what they cached of it. */
export type CredentialRevokedEvent = { credentialId: string };

export type EventMap = { deposit: [DepositEvent]; credentialRevoked: [CredentialRevokedEvent] };
export type Events = PubSub<EventMap>;

export function createEvents(eventTarget?: EventTarget): Events {
  return createPubSub<EventMap>(eventTarget ? { eventTarget: eventTarget as never } : undefined);
}
