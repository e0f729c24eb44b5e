import type { AddressAllowlist } from "../keys/allowed-ips.js";
import type { Permissions } from "./permissions.js";

/** A verified caller: its client, and the credential it presented (live streams end when that credential does). */
export type AuthenticatedClient = {
  clientId: string;
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
