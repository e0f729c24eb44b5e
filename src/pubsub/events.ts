import { createPubSub, type PubSub } from "graphql-yoga";
import { afterCommit } from "../db/unit-of-work.js";

/** A deposit was created or changed state (published after the change has committed). */
export type DepositEvent = { clientId: string; userId: string; depositId: string; status: string };

/** An API key was revoked or a session logged out: instances drop what they cached of it. */
export type CredentialRevokedEvent = { credentialId: string };

export type EventMap = { deposit: [DepositEvent]; credentialRevoked: [CredentialRevokedEvent] };
export type Events = PubSub<EventMap>;

/** Publications made inside a unit of work go out once it has committed (a rolled-back change is never announced). */
export function createEvents(eventTarget?: EventTarget): Events {
  const pubsub = createPubSub<EventMap>(eventTarget ? { eventTarget: eventTarget as never } : undefined);
  return { ...pubsub, publish: (...args) => afterCommit(() => pubsub.publish(...args)) };
}
