import { createHash } from "node:crypto";
import { print, type ExecutionResult, type GraphQLError, type OperationDefinitionNode } from "graphql";
import type { Plugin } from "graphql-yoga";
import { AppError, type ErrorCode } from "../errors.js";
import { authenticationOf } from "../graphql/context.js";
import { codeOf, maskError } from "../graphql/errors.js";
import type { Logger } from "../logger.js";
import type { Services } from "../services.js";
import type { IdempotencyRecords } from "./idempotency-records.js";
import { isPublicOperation, rootFieldNames, selectedOperation } from "./operations.js";
import type { TransportContext } from "./request-info.js";

const KEY_FORMAT = /^[\x21-\x7E]{1,255}$/;
/**
 * Codes that mean the operation was refused before it acted: services raise them before they write,
 * or inside the transaction that then rolls back. A keyed request answered only with these is not
 * kept, so it can be corrected and retried under the same key.
 */
const REFUSALS = new Set<ErrorCode>(["BAD_USER_INPUT", "NOT_FOUND", "UNAUTHENTICATED", "FORBIDDEN", "RATE_LIMITED"]);
export const REPLAYED_HEADER = "Idempotent-Replayed";

/**
 * Idempotency-Key, for mutations on every transport (the header over HTTP, `extensions.idempotencyKey`
 * over websockets). The rule: a keyed mutation holds exactly one root field, so "did it act?" has one
 * answer. The first request with a key runs and its result is kept (encrypted) 24 hours; the same key
 * and operation replays it; another operation under the key is a 422; while the first runs, a 409.
 * Runs after admission: the key belongs to the authenticated client.
 */
export function useIdempotency(deps: { records: IdempotencyRecords; services: Services; logger: Logger }): Plugin<TransportContext> {
  return {
    async onExecute({ args, setResultAndStopExecution }) {
      const scope = args.contextValue;
      const key = scope.requestInfo.idempotencyKey;
      const operation = selectedOperation(args.document, args.operationName);
      if (key === undefined || key === null || operation?.operation !== "mutation") return;
      // Keys are kept per client: an anonymous sign-in (a public operation without a credential) has none to keep it for.
      const client = await authenticationOf(scope, deps.services).catch(() => undefined);
      if (!client && isPublicOperation(operation, false)) return;
      let claim: { clientId: string; rootKey: string; key: string };
      try {
        const rootKey = singleRootField(operation);
        if (typeof key !== "string" || !KEY_FORMAT.test(key)) {
          throw new AppError("BAD_USER_INPUT", "Idempotency-Key must be 1 to 255 printable ASCII characters", { param: "Idempotency-Key" });
        }
        const { clientId } = client ?? (await authenticationOf(scope, deps.services));
        const replay = await deps.records.claim(clientId, key, requestHash(operation, args.document, args.variableValues), args.document.loc?.source);
        if (replay) {
          setResultAndStopExecution({ ...replay, extensions: { http: { headers: { [REPLAYED_HEADER]: "true" } } } } as ExecutionResult);
          return;
        }
        claim = { clientId, rootKey, key };
      } catch (error) {
        setResultAndStopExecution({ errors: [maskError(error, deps.logger, scope.requestInfo.requestId)] });
        return;
      }
      return {
        async onExecuteDone({ result }) {
          if (!isExecutionResult(result)) return;
          const errors = result.errors?.map((error) => maskError(error, deps.logger));
          try {
            if (wasRefused(result.data?.[claim.rootKey], errors)) await deps.records.release(claim.clientId, claim.key);
            else await deps.records.complete(claim.clientId, claim.key, { data: result.data, errors });
          } catch (err) {
            // The record stays IN_PROGRESS: retries get a 409 until it expires, and never run twice.
            deps.logger.error({ err, requestId: scope.requestInfo.requestId }, "could not record an idempotent result");
          }
        },
      };
    },
  };
}

/** The response key of the one root field a keyed mutation may have. */
function singleRootField(operation: OperationDefinitionNode): string {
  const names = rootFieldNames(operation)?.filter((name) => name !== "__typename");
  const [field] = operation.selectionSet.selections;
  if (names?.length !== 1 || operation.selectionSet.selections.length !== 1 || field.kind !== "Field") {
    throw new AppError("BAD_USER_INPUT", "A request with an Idempotency-Key must hold exactly one mutation field", { param: "Idempotency-Key" });
  }
  return field.alias?.value ?? field.name.value;
}

function requestHash(operation: OperationDefinitionNode, document: Parameters<typeof print>[0], variables: unknown): string {
  return createHash("sha256")
    .update(JSON.stringify([operation.name?.value ?? null, print(document), canonical(variables ?? {})]))
    .digest("hex");
}

/** Variables with their keys sorted, so the same request always hashes the same. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.keys(value).sort().map((key) => [key, canonical((value as Record<string, unknown>)[key])]));
  }
  return value;
}

function wasRefused(rootValue: unknown, errors: GraphQLError[] | undefined): boolean {
  if (rootValue !== null && rootValue !== undefined) return false;
  return !!errors?.length && errors.every((error) => REFUSALS.has(codeOf(error)));
}

const isExecutionResult = (result: unknown): result is ExecutionResult =>
  !!result && typeof result === "object" && !(Symbol.asyncIterator in result);
