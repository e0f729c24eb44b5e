import type { Grant, Permissions } from "../auth/permissions.js";
import { graphql, type ResultOf } from "../graphql/typed.js";

/** An API key as lists show it (also the `data.object` of API key events). */
export const ApiKeyFields = graphql(`fragment ApiKeyFields on ApiKey { id prefix name permissions { resource access } createdAt lastUsedAt revokedAt }`);
export const API_KEY_KEYS = ["id", "prefix", "name", "permissions", "createdAt", "lastUsedAt", "revokedAt"] as const satisfies readonly (keyof ResultOf<typeof ApiKeyFields>)[];

/** GraphQL's list of grants (`[{resource: USERS, access: WRITE}]`) as REST shows them: `{users: "write"}`, null for a full key. */
export const permissionsBody = (grants: readonly { resource: string; access: string }[] | null): Permissions | null =>
  grants === null ? null : Object.fromEntries(grants.map(({ resource, access }) => [resource.toLowerCase(), access.toLowerCase()]));

/** A REST body's `{users: "write"}` as GraphQL's list (codes upper-cased for its enums); anything else as sent, for GraphQL to refuse. */
export const permissionsInput = (value: unknown): unknown =>
  value && typeof value === "object" && !Array.isArray(value)
    ? Object.entries(value).map(([resource, access]): Record<keyof Grant, unknown> => ({
        resource: resource.toUpperCase(),
        access: typeof access === "string" ? access.toUpperCase() : access,
      }))
    : value;

export const apiKeyBody = <T extends ResultOf<typeof ApiKeyFields>>(key: T) => ({ ...key, permissions: permissionsBody(key.permissions) });
