import { BasePlugin, type PothosOutputFieldConfig, type SchemaTypes } from "@pothos/core";
import type { GraphQLFieldResolver } from "graphql";
import type { Context } from "./context.js";
import { appErrorOf } from "./errors.js";
import { addResultTargets, fieldRuns, outcomeOf, runAudited, type AuditOutcome, type AuditScope } from "../db/audit-scope.js";

/**
 * Every Mutation field is audited by construction: its resolver runs inside an audit scope, so each
 * transaction it opens writes its entry before committing (src/db/audit-scope.ts), and its outcome is
 * kept on the operation's context for the pipeline (src/pipeline/audit.ts) to write once the
 * operation is over, outside any transaction (a refusal or failure rolls its own back). A caller
 * without a credential (signing in) belongs to no client, so it has no log to be written to.
 */
export class AuditLogPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  override wrapResolve(
    resolver: GraphQLFieldResolver<unknown, Types["Context"], object>,
    fieldConfig: PothosOutputFieldConfig<Types>,
  ): GraphQLFieldResolver<unknown, Types["Context"], object> {
    if (fieldConfig.kind !== "Mutation") return resolver;
    return async (parent, args, context, info) => {
      const ctx = context as Context;
      const caller = await ctx.client().catch(() => undefined);
      if (!caller) return resolver(parent, args, context, info);
      const scope: AuditScope = { entry: ctx.services.audit.entry(caller, info.fieldName, ctx.requestInfo), open: true };
      let outcome: AuditOutcome = "succeeded";
      try {
        const result = await runAudited(scope, () => resolver(parent, args, context, info));
        addResultTargets(scope, result);
        return result;
      } catch (error) {
        outcome = outcomeOf(appErrorOf(error)?.code ?? "INTERNAL");
        throw error;
      } finally {
        scope.open = false;
        fieldRuns(ctx).set(String(info.path.key), { scope, outcome });
      }
    };
  }
}
