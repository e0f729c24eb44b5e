import type { Logger } from "../logger.js";
import type { AuthenticatedClient } from "../caller/authenticated-client.js";
import type { AuthService, CredentialEnd } from "./service.js";

/** How often live credentials are re-checked: a revocation or logout on any instance is seen within this. */
const SWEEP_INTERVAL_MS = 500;
/** setTimeout's longest delay. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Tells live streams (websocket connections, subscriptions over SSE) when the credential they were
 * opened with ends: at a session's expiry by a timer, and at a revocation or logout made on any
 * instance by re-reading the watched credentials from the database every SWEEP_INTERVAL_MS (one
 * query for all of them, and only while something is watched).
 */
export class CredentialWatch {
  private readonly watchers = new Map<string, Set<(how: CredentialEnd) => void>>();
  private sweep?: NodeJS.Timeout;
  private closed = false;

  constructor(private readonly deps: { auth: AuthService; logger: Logger }) {}

  /** Calls `onEnd` once when the credential ends, with how; the returned function stops watching. */
  watch(credential: AuthenticatedClient, onEnd: (how: CredentialEnd) => void): () => void {
    let watching = true;
    const end = (how: CredentialEnd) => {
      if (!watching) return;
      stop();
      onEnd(how);
    };
    const expiry = credential.expiresAt
      ? setTimeout(() => end("expired"), Math.min(Math.max(0, credential.expiresAt.getTime() - Date.now()), MAX_TIMER_MS))
      : undefined;
    const watchers = this.watchers.get(credential.credentialId) ?? new Set();
    watchers.add(end);
    this.watchers.set(credential.credentialId, watchers);
    this.scheduleSweep();
    const stop = () => {
      watching = false;
      clearTimeout(expiry);
      watchers.delete(end);
      if (watchers.size === 0) this.watchers.delete(credential.credentialId);
    };
    return stop;
  }

  close() {
    this.closed = true;
    clearTimeout(this.sweep);
  }

  private scheduleSweep() {
    if (this.sweep || this.closed) return;
    this.sweep = setTimeout(() => void this.runSweep(), SWEEP_INTERVAL_MS);
    this.sweep.unref();
  }

  private async runSweep() {
    try {
      const ended = await this.deps.auth.endedCredentials([...this.watchers.keys()]);
      for (const [id, how] of ended) for (const end of [...(this.watchers.get(id) ?? [])]) end(how);
    } catch (err) {
      this.deps.logger.warn({ err }, "could not re-check live credentials");
    } finally {
      this.sweep = undefined;
      if (this.watchers.size > 0) this.scheduleSweep();
    }
  }
}

/**
 * Why a stream ended with its credential, in words a client can show: the reason of a websocket's
 * 4401 close, and the message of an SSE stream's last `next` event (close reasons hold 123 bytes).
 */
export const CREDENTIAL_ENDED_MESSAGES: Record<CredentialEnd, string> = {
  revoked: "The credential this stream was opened with was revoked or logged out",
  expired: "The credential this stream was opened with has expired",
};
