import { isAsyncIterable, type Plugin } from "graphql-yoga";
import type { GraphQLError } from "graphql";
import { alreadyWritten, fieldRuns, outcomeOf, type FieldRun } from "../db/audit-scope.js";
import { authenticationOf, type Services } from "../graphql/context.js";
import { codeOf } from "../graphql/errors.js";
import type { Logger } from "../logger.js";
import { rootFieldsOf, selectedOperation } from "./operations.js";
import type { TransportContext } from "../caller/request-info.js";

/**
 * The audit log's step of the pipeline, right after admission: once a mutation is over, writes each
 * of its root fields' outcome (those that ran, src/graphql/audit-plugin.ts) and an entry for each root field
 * refused before it could run (the permission rule, the text rule, the cost limit, Idempotency-Key,
 * variables GraphQL refuses): every root field of a document refused whole, those inside root-level
 * fragments (spread or inline) included, whichever field the refusal names. Outside every transaction: entries of fields that acted were written by
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
          // Refused before any field ran (no data): the refusal is every root field's, whichever field it names.
          const refusedWhole = runs.size === 0 && !result.data ? result.errors?.[0] : undefined;
          for (const { key, name } of rootFieldsOf(args.document, operation, args.variableValues)) {
            if (name.startsWith("__") || runs.has(key)) continue; // ran: recorded above
            const refusal = result.errors?.find((error: GraphQLError) => !error.path || error.path[0] === key) ?? refusedWhole;
            if (!refusal) continue;
            const entry = deps.services.audit.entry(caller, name, context.requestInfo);
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
