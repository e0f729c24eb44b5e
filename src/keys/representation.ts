import { storedPermissions, type Grant, type Permissions } from "../caller/permissions.js";
import { graphql, type ResultOf } from "../graphql/typed.js";
import type { ApiKey } from "../generated/prisma/client.js";
import { asGraphQLValues, pickKeys } from "../representation.js";

/** An API key as lists show it (also the `data.object` of API key events). */
export const ApiKeyFields = graphql(`fragment ApiKeyFields on ApiKey { id prefix mode name permissions { resource access } createdAt lastUsedAt revokedAt expiresAt allowedIps livemode }`);
export const API_KEY_KEYS = ["id", "prefix", "mode", "name", "permissions", "createdAt", "lastUsedAt", "revokedAt", "expiresAt", "allowedIps", "livemode"] as const satisfies readonly (keyof ResultOf<typeof ApiKeyFields>)[];

/** A new key (created or rolled), with its secret. */
export const CreatedApiKeyFields = graphql(`fragment CreatedApiKeyFields on CreatedApiKey { id key prefix mode name permissions { resource access } createdAt expiresAt allowedIps livemode }`);

/** A key's allowlist as every surface shows it: null when the key may be used from anywhere. */
export const shownAllowedIps = (allowedIps: readonly string[] | null) => (allowedIps?.length ? [...allowedIps] : null);

/** GraphQL's list of grants (`[{resource: USERS, access: WRITE}]`) as REST shows them: `{users: "write"}`, null for a full key. */
export const permissionsBody = (grants: readonly { resource: string; access: string }[] | null): Permissions | null =>
  grants === null ? null : Object.fromEntries(grants.map(({ resource, access }) => [resource.toLowerCase(), access.toLowerCase()]));

/** A REST body's `{users: "write"}` as GraphQL's list (codes upper-cased for its enums); anything else as sent, for the REST rules to refuse. */
export const permissionsInput = (value: unknown): unknown =>
  value && typeof value === "object" && !Array.isArray(value)
    ? Object.entries(value).map(([resource, access]): Record<keyof Grant, unknown> => ({
        resource: resource.toUpperCase(),
        access: typeof access === "string" ? access.toUpperCase() : access,
      }))
    : value;

/** A key (listed or new) as REST shows it: permissions as a map. */
export const apiKeyBody = <T extends { permissions: readonly { resource: string; access: string }[] | null }>(key: T) => ({ ...key, permissions: permissionsBody(key.permissions) });

/** An API key as REST shows it: the `data.object` of its events. */
export const apiKeyObject = (key: Omit<ApiKey, "hash">) =>
  pickKeys({ ...asGraphQLValues(key), permissions: storedPermissions(key.permissions), allowedIps: shownAllowedIps(key.allowedIps) }, API_KEY_KEYS);
