import { graphql, type ResultOf } from "../graphql/typed.js";

/** An API key as lists show it (also the `data.object` of API key events). */
export const ApiKeyFields = graphql(`fragment ApiKeyFields on ApiKey { id prefix createdAt lastUsedAt revokedAt expiresAt allowedIps }`);
export const API_KEY_KEYS = ["id", "prefix", "createdAt", "lastUsedAt", "revokedAt", "expiresAt", "allowedIps"] as const satisfies readonly (keyof ResultOf<typeof ApiKeyFields>)[];

/** A key's allowlist as every surface shows it: null when the key may be used from anywhere. */
export const shownAllowedIps = (allowedIps: readonly string[] | null) => (allowedIps?.length ? [...allowedIps] : null);
