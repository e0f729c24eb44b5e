import { AppError } from "../errors.js";
import { includes, type Permissions } from "../caller/permissions.js";
import type { AuthenticatedClient } from "../caller/authenticated-client.js";
import type { AddressAllowlist } from "../caller/allowed-ips.js";

/**
 * What a credential may hand on to the keys it creates, rolls or revokes: at most what it holds
 * itself, its grants, its allowlist and its expiry. A session and a key without restrictions hold
 * everything (`UNBOUNDED`).
 */
export type KeyAuthority = {
  /** null: every permission. */
  permissions: Permissions | null;
  /** undefined: usable from anywhere. */
  allowedIps?: AddressAllowlist;
  /** null: never expires. */
  expiresAt: Date | null;
};

export const UNBOUNDED: KeyAuthority = { permissions: null, expiresAt: null };

/** A session can do everything its client can, however long the session lasts; a key holds what it was made with. */
export const authorityOf = (caller: AuthenticatedClient): KeyAuthority =>
  caller.method === "JWT" ? UNBOUNDED : { permissions: caller.permissions, allowedIps: caller.allowedIps, expiresAt: caller.expiresAt ?? null };

/** A key as the rule sees it: `allowedIps` empty is anywhere, `expiresAt` null is never. */
export type KeyReach = { permissions: Permissions | null; allowedIps: readonly string[]; expiresAt: Date | null };

export type KeyAction = "create" | "roll" | "revoke";

/** Why `key` reaches beyond `authority`, or undefined when it lies within. */
function excess(authority: KeyAuthority, key: KeyReach): string | undefined {
  if (!includes(authority.permissions, key.permissions)) return "permissions it does not have";
  if (authority.allowedIps && (key.allowedIps.length === 0 || !authority.allowedIps.covers(key.allowedIps))) return "addresses outside its own allowedIps";
  if (authority.expiresAt && (!key.expiresAt || key.expiresAt > authority.expiresAt)) return "a lifetime beyond its own expiry";
  return undefined;
}

/** A restricted key may create, roll or revoke only keys within what it holds itself: 403 naming what reaches beyond. */
export function assertWithin(authority: KeyAuthority, key: KeyReach, action: KeyAction): void {
  const reason = excess(authority, key);
  if (reason) throw new AppError("FORBIDDEN", `A restricted API key cannot ${action} a key with ${reason}`);
}
