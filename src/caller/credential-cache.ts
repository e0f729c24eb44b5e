import { hash } from "node:crypto";
import type { Logger } from "../logger.js";
import type { CredentialRevokedEvent, Events } from "../pubsub/events.js";
import type { AuthenticatedClient } from "./authenticated-client.js";

/** The longest an instance may trust a verification it made (SPEC §3): a revocation it missed still lands within this. */
export const MAX_CREDENTIAL_CACHE_MS = 1000;
/** Entries kept at most; past it, expired ones go, then the oldest (the cache only ever saves a lookup). */
const MAX_ENTRIES = 10_000;

/**
 * Verified credentials, remembered for at most a second per instance so that a busy caller costs one
 * key or session lookup a second instead of one per request. A revocation or logout drops the entry
 * at once on the instance that made it and, through the event bus, on every other one; an instance
 * that misses that event still forgets the entry within a second. Only successes are remembered.
 */
export class CredentialCache {
  private readonly entries = new Map<string, { credential: AuthenticatedClient; until: number }>();
  private readonly verifying = new Map<string, { lookup: Promise<AuthenticatedClient>; revocationsBefore: number }>();
  private revocationCount = 0;
  private readonly revocations: AsyncIterableIterator<CredentialRevokedEvent>;

  constructor(private readonly deps: { events: Events; logger: Logger; ttlMs: number }) {
    this.revocations = deps.events.subscribe("credentialRevoked")[Symbol.asyncIterator]() as AsyncIterableIterator<CredentialRevokedEvent>;
    void this.listen();
  }

  async remember(presented: string, verify: () => Promise<AuthenticatedClient>): Promise<AuthenticatedClient> {
    if (this.deps.ttlMs <= 0) return verify();
    const key = fingerprint(presented);
    const now = Date.now();
    const cached = this.entries.get(key);
    if (cached && cached.until > now && (!cached.credential.expiresAt || cached.credential.expiresAt.getTime() > now)) return cached.credential;
    this.entries.delete(key);
    // One lookup per expiry, not one per request in flight when the entry lapses (50 at once under
    // load); a lookup begun before the latest revocation is not joined.
    const inFlight = this.verifying.get(key);
    if (inFlight && inFlight.revocationsBefore === this.revocationCount) return inFlight.lookup;
    return this.verifyOnce(key, now, verify);
  }

  private async verifyOnce(key: string, now: number, verify: () => Promise<AuthenticatedClient>): Promise<AuthenticatedClient> {
    const revocationsBefore = this.revocationCount;
    const lookup = verify();
    this.verifying.set(key, { lookup, revocationsBefore });
    try {
      const credential = await lookup;
      // A revocation heard while the lookup ran may concern it: the answer is used once, never kept.
      if (this.revocationCount !== revocationsBefore) return credential;
      if (this.entries.size >= MAX_ENTRIES) this.prune(now);
      this.entries.set(key, { credential, until: now + Math.min(this.deps.ttlMs, MAX_CREDENTIAL_CACHE_MS) });
      return credential;
    } finally {
      if (this.verifying.get(key)?.lookup === lookup) this.verifying.delete(key);
    }
  }

  /**
   * Called once a revocation, a logout or a key's roll (a change of its expiry) has committed:
   * forgets the credential here and tells every instance, which then read it afresh.
   */
  revoked(credentialId: string) {
    this.drop(credentialId);
    this.deps.events.publish("credentialRevoked", { credentialId });
  }

  async close() {
    this.entries.clear();
    await this.revocations.return?.();
  }

  private prune(now: number) {
    for (const [key, entry] of this.entries) if (entry.until <= now) this.entries.delete(key);
    for (const key of this.entries.keys()) {
      if (this.entries.size < MAX_ENTRIES) break;
      this.entries.delete(key);
    }
  }

  private drop(credentialId: string) {
    this.revocationCount++;
    for (const [key, entry] of this.entries) if (entry.credential.credentialId === credentialId) this.entries.delete(key);
  }

  private async listen() {
    try {
      for await (const { credentialId } of { [Symbol.asyncIterator]: () => this.revocations }) this.drop(credentialId);
    } catch (err) {
      this.deps.logger.warn({ err }, "stopped hearing credential revocations; cached credentials still expire within a second");
    }
  }
}

/** One-shot `hash`: on every authenticated request, it builds no Hash object as createHash does. */
const fingerprint = (presented: string) => hash("sha256", presented, "base64url");
