import SchemaBuilder, { BasePlugin, type FieldNullability, type InputFieldMap, type PothosOutputFieldConfig, type SchemaTypes, type TypeParam } from "@pothos/core";
import type { OperationPermission } from "../caller/permissions.js";
import { AuditLogPlugin } from "./audit-plugin.js";

/**
 * The builder's plugins of SPEC §13: this one (permissions) and the audit log's (src/graphql/audit-plugin.ts).
 *
 * Every root field declares what it needs beside its definition: `permission: "users:write"`
 * (or `authenticated`, `public`). The option is required on Query, Mutation and Subscription fields,
 * so a new operation without one fails the type-check; this plugin copies it into the field's
 * `extensions.permission`, where the pipeline's permission rule (src/pipeline/permissions.ts) reads
 * it, and `assertPermissionsDeclared` refuses to start a schema whose root field lacks it.
 */
export class PermissionsPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  override onOutputFieldConfig(fieldConfig: PothosOutputFieldConfig<Types>): PothosOutputFieldConfig<Types> {
    const { permission } = fieldConfig.pothosOptions as { permission?: OperationPermission };
    if (!permission) return fieldConfig;
    return { ...fieldConfig, extensions: { ...fieldConfig.extensions, permission } };
  }
}

SchemaBuilder.registerPlugin("permissions", PermissionsPlugin);
SchemaBuilder.registerPlugin("auditLog", AuditLogPlugin);
/** The builder's own plugins, by the names Pothos registered them under. */
export const PERMISSIONS_PLUGIN = "permissions";
export const AUDIT_LOG_PLUGIN = "auditLog";

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  export namespace PothosSchemaTypes {
    export interface Plugins<Types extends SchemaTypes> {
      permissions: PermissionsPlugin<Types>;
      auditLog: AuditLogPlugin<Types>;
    }
    export interface QueryFieldOptions<Types extends SchemaTypes, Type extends TypeParam<Types>, Nullable extends FieldNullability<Type>, Args extends InputFieldMap, ResolveReturnShape> {
      /** What a caller's credential must allow to run this field (SPEC §13). */
      permission: OperationPermission;
    }
    export interface MutationFieldOptions<Types extends SchemaTypes, Type extends TypeParam<Types>, Nullable extends FieldNullability<Type>, Args extends InputFieldMap, ResolveReturnShape> {
      /** What a caller's credential must allow to run this field (SPEC §13); a mutation needs a `write`. */
      permission: OperationPermission;
    }
    export interface SubscriptionFieldOptions<Types extends SchemaTypes, Type extends TypeParam<Types>, Nullable extends FieldNullability<Type>, Args extends InputFieldMap, ResolveShape, ResolveReturnShape> {
      /** What a caller's credential must allow to open this stream (SPEC §13). */
      permission: OperationPermission;
    }
  }
}
