import { z } from "zod";
import { AppError } from "../errors.js";

/** What a restricted key may be given access to (SPEC §13). `accounts`: virtual and USDC accounts, balances; `events`: the feed and webhook endpoints. */
export const RESOURCES = ["users", "wallets", "cards", "accounts", "deposits", "withdrawals", "conversions", "ledger", "events", "api_keys"] as const;
export type Resource = (typeof RESOURCES)[number];

/** `write` implies `read`. */
export const ACCESS_LEVELS = ["read", "write"] as const;
export type AccessLevel = (typeof ACCESS_LEVELS)[number];

/** What one operation or field needs, named as a refusal names it: `users:write`. */
export type Permission = `${Resource}:${AccessLevel}`;

/**
 * What a root field needs (declared beside it, as its `permission` option): a resource permission,
 * `authenticated` (any valid credential: the caller's own client, its session), or `public` (signing in).
 */
export type OperationPermission = Permission | "authenticated" | "public";

/** A restricted key's grants; `null` is a full key (and a session: it can do everything its client can). */
export type Permissions = Partial<Record<Resource, AccessLevel>>;

export const PermissionsInput = z
  .partialRecord(z.enum(RESOURCES, { error: `permissions keys must be one of ${RESOURCES.join(", ")}` }), z.enum(ACCESS_LEVELS, { error: "permissions values must be read or write" }), {
    error: "permissions must be an object mapping a resource to read or write",
  })
  .refine((value) => Object.keys(value).length > 0, "permissions must name at least one resource (omit it for a full key)");

export const permissionOf = (resource: Resource, level: AccessLevel): Permission => `${resource}:${level}`;

function split(permission: Permission): [Resource, AccessLevel] {
  const [resource, level] = permission.split(":") as [Resource, AccessLevel];
  return [resource, level];
}

/** Whether grants (null: full access) allow the permission. */
export function allows(grants: Permissions | null, permission: Permission): boolean {
  if (grants === null) return true;
  const [resource, level] = split(permission);
  const granted = grants[resource];
  return granted === "write" || granted === level;
}

/** Whether `wanted` (null: full access) asks for nothing `held` lacks: a key can never make a key with more than it has. */
export function includes(held: Permissions | null, wanted: Permissions | null): boolean {
  if (held === null) return true;
  if (wanted === null) return false;
  return Object.entries(wanted).every(([resource, level]) => allows(held, permissionOf(resource as Resource, level)));
}

/** The one refusal: 403 FORBIDDEN naming the permission. */
export const forbidden = (permission: Permission) => new AppError("FORBIDDEN", `This API key lacks the ${permission} permission`);

/** Stored permissions, as the database gives them back (JSON; written only after PermissionsInput accepted them). */
export const storedPermissions = (value: unknown): Permissions | null => (value && typeof value === "object" ? (value as Permissions) : null);

/** One grant as GraphQL lists them: `{resource: USERS, access: WRITE}`. */
export type Grant = { resource: Resource; access: AccessLevel };

/** Grants as a list in RESOURCES order (GraphQL), or null for a full key. */
export const grantList = (grants: Permissions | null): Grant[] | null =>
  grants === null ? null : RESOURCES.filter((resource) => grants[resource]).map((resource) => ({ resource, access: grants[resource]! }));

/** A GraphQL list of grants as the map the service takes; a resource named twice is a 400. */
export function grantMap(list: readonly Grant[]): Permissions {
  const grants: Permissions = {};
  for (const { resource, access } of list) {
    if (grants[resource]) throw new AppError("BAD_USER_INPUT", `permissions names ${resource} more than once`, { param: "permissions" });
    grants[resource] = access;
  }
  return grants;
}
