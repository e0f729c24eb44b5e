import { isAsyncIterable, type Plugin } from "graphql-yoga";
import { Kind, type GraphQLError } from "graphql";
import { outcomeOf } from "../audit/service.js";
import { alreadyWritten, fieldRuns, type FieldRun } from "../audit/scope.js";
import { authenticationOf } from "../graphql/context.js";
import { codeOf } from "../graphql/errors.js";
import type { Logger } from "../logger.js";
import type { Services } from "../services.js";
import { selectedOperation } from "./operations.js";
import type { TransportContext } from "./request-info.js";

/**
 * The audit log's step of the pipeline, right after admission: once a mutation is over, writes each
 * of its root fields' outcome (those that ran, src/audit/plugin.ts) and an entry for each root field
 * refused before it could run (the permission rule, the text rule, the cost limit, Idempotency-Key,
 * variables GraphQL refuses). Outside every transaction: entries of fields that acted were written by
 * their own transactions already, and this only sets their final outcome (a failure after a commit, a
 * target found after it), or writes nothing more. A caller without a valid
 * credential is refused by admission before this, and has no client whose log it could go to.
 */
export function useAuditLog(deps: { services: Services; logger: Logger }): Plugin<TransportContext> {
  return {
    onExecute({ args }) {
      const operation = selectedOperation(args.document, args.operationName);
      if (operation?.operation !== "mutation") return;
      const context = args.contextValue;
      return {
        async onExecuteDone({ result }) {
          if (isAsyncIterable(result)) return;
          const caller = await authenticationOf(context, deps.services).catch(() => undefined);
          if (!caller) return;
          const runs = fieldRuns(context);
          const outcomes: FieldRun[] = [...runs.values()].filter((run) => !alreadyWritten(run));
          for (const selection of operation.selectionSet.selections) {
            if (selection.kind !== Kind.FIELD || selection.name.value.startsWith("__")) continue;
            const key = selection.alias?.value ?? selection.name.value;
            const refusal = runs.has(key) ? undefined : result.errors?.find((error: GraphQLError) => !error.path || error.path[0] === key);
            if (!refusal) continue; // it ran (recorded above), or was skipped (@skip/@include)
            const entry = deps.services.audit.entry(caller, selection.name.value, context.requestInfo);
            outcomes.push({ scope: { entry, open: false }, outcome: outcomeOf(codeOf(refusal)) });
          }
          try {
            for (const { scope, outcome } of outcomes) await deps.services.audit.finish(scope.entry, outcome);
          } catch (err) {
            deps.logger.error({ err, requestId: context.requestInfo.requestId }, "could not write the audit log's outcome of a mutation");
          }
        },
      };
    },
  };
}
