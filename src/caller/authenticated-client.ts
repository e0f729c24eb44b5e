import type { AddressAllowlist } from "./allowed-ips.js";
import type { Mode } from "../modes.js";
import type { Permissions } from "./permissions.js";

/** A verified caller: its client, and the credential it presented (live streams end when that credential does). */
export type AuthenticatedClient = {
  /** The tenant the caller acts in: its business in one mode. Every read and write is scoped by it. */
  clientId: string;
  /** The mode of that tenant (SPEC §15): an API key's own, or the one a session named for this request. */
  mode: Mode;
  /** The business: the same for its test and live tenants (what a session signed in as). */
  accountId: string;
  method: "API_KEY" | "JWT";
  /** The API key's id, or the session's id (the JWT's `jti`). */
  credentialId: string;
  /** When the credential stops being valid by itself: a session's end, a rolled or expiring key's expiresAt. */
  expiresAt?: Date;
  /** The only addresses the credential may be used from (an API key with allowedIps). */
  allowedIps?: AddressAllowlist;
  /** A restricted key's grants (SPEC §13); null for a full key and for a session, which may do all its client can. */
  permissions: Permissions | null;
};
