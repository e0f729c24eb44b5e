import { createHash } from "node:crypto";
import { print, type ExecutionResult, type GraphQLError, type OperationDefinitionNode } from "graphql";
import type { Plugin } from "graphql-yoga";
import { AppError, type ErrorCode } from "../errors.js";
import { authenticationOf, type Services } from "../graphql/context.js";
import { codeOf, maskError } from "../graphql/errors.js";
import type { Logger } from "../logger.js";
import type { IdempotencyRecords, KeyedRequest } from "./idempotency-records.js";
import { isPublicOperation, rootFieldNames, selectedOperation } from "./operations.js";
import type { TransportContext } from "../caller/request-info.js";

const KEY_FORMAT = /^[\x21-\x7E]{1,255}$/;
/**
 * Codes that mean the operation was refused before it acted: services raise them before they write,
 * or inside the transaction that then rolls back. A keyed request whose root field's own resolver
 * refused with these is not kept, so it can be corrected and retried under the same key.
 */
const REFUSALS = new Set<ErrorCode>(["BAD_USER_INPUT", "NOT_FOUND", "UNAUTHENTICATED", "FORBIDDEN", "RATE_LIMITED"]);
export const REPLAYED_HEADER = "Idempotent-Replayed";

/**
 * Idempotency-Key, for mutations on every transport (the header over HTTP, or `extensions.idempotencyKey`
 * over HTTP and websockets). The rule: a keyed mutation holds exactly one root field, so "did it act?"
 * has one answer. The first request with a key runs, as one transaction with its kept result
 * (IdempotencyRecords), which is kept (encrypted) 24 hours; the same key and operation from the same
 * credential replays it; another operation, or another credential of the client, under the key is a
 * 422; while the first runs, a 409. Runs after admission and the permission rule: the key belongs to
 * the authenticated client, and a credential refused the operation never reaches a replay.
 */
export function useIdempotency(deps: { records: IdempotencyRecords; services: Services; logger: Logger }): Plugin<TransportContext> {
  return {
    async onExecute({ args, executeFn, setExecuteFn, setResultAndStopExecution }) {
      const scope = args.contextValue;
      const operation = selectedOperation(args.document, args.operationName);
      if (operation?.operation !== "mutation") return;
      let request: KeyedRequest & { rootKey: string };
      try {
        const key = keyOf(scope);
        if (key === undefined || key === null) return;
        // Keys are kept per client and credential: an anonymous sign-in (a public operation without a credential) has neither.
        const client = await authenticationOf(scope, deps.services).catch(() => undefined);
        if (!client && isPublicOperation(operation, false)) return;
        const rootKey = singleRootField(operation);
        if (typeof key !== "string" || !KEY_FORMAT.test(key)) {
          throw new AppError("BAD_USER_INPUT", "Idempotency-Key must be 1 to 255 printable ASCII characters", { param: "Idempotency-Key" });
        }
        const { clientId, credentialId } = client ?? (await authenticationOf(scope, deps.services));
        request = { clientId, credentialId, key, rootKey, requestHash: requestHash(operation, args.document, args.variableValues), source: args.document.loc?.source };
      } catch (error) {
        setResultAndStopExecution({ errors: [maskError(error, deps.logger, scope.requestInfo.requestId)] });
        return;
      }
      setExecuteFn(async (executionArgs) => {
        try {
          const outcome = await deps.records.runOnce(request, async () => {
            const answer = await executeFn(executionArgs);
            if (!isExecutionResult(answer)) throw new AppError("BAD_USER_INPUT", "A request with an Idempotency-Key must have one result (no @defer or @stream)");
            const result = { data: answer.data, errors: answer.errors?.map((error) => maskError(error, deps.logger, scope.requestInfo.requestId)) };
            return { answer, result, refused: rootFieldRefused(request.rootKey, result) };
          });
          if ("replayed" in outcome) return { ...outcome.replayed, extensions: { http: { headers: { [REPLAYED_HEADER]: "true" } } } } as ExecutionResult;
          return outcome.answer;
        } catch (error) {
          return { errors: [maskError(error, deps.logger, scope.requestInfo.requestId)] };
        }
      });
    },
  };
}

/**
 * The key as sent: the Idempotency-Key header (HTTP) or `extensions.idempotencyKey` (any transport).
 * Over HTTP both may be sent, but then they must agree.
 */
function keyOf(scope: TransportContext & { params?: { extensions?: Record<string, unknown> } }): unknown {
  const fromTransport = scope.requestInfo.idempotencyKey;
  if (scope.requestInfo.transport === "websocket") return fromTransport;
  const fromBody = scope.params?.extensions?.idempotencyKey;
  if (fromBody === undefined) return fromTransport;
  if (fromTransport !== undefined && fromTransport !== fromBody) {
    throw new AppError("BAD_USER_INPUT", "The Idempotency-Key header and extensions.idempotencyKey differ", { param: "Idempotency-Key" });
  }
  return fromBody;
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

/**
 * True when the root field refused: the root is null and every error is a refusal raised by the root
 * field itself (or before any field ran). An error of a nested field never counts, even when it nulls
 * the root: the root resolver has acted by then. (IdempotencyRecords also checks that nothing was
 * written, since a root field's error can be raised after its resolver acted.)
 */
function rootFieldRefused(rootKey: string, result: { data?: Record<string, unknown> | null; errors?: readonly GraphQLError[] }): boolean {
  if (result.data?.[rootKey] !== null && result.data?.[rootKey] !== undefined) return false;
  return (
    !!result.errors?.length &&
    result.errors.every((error) => REFUSALS.has(codeOf(error)) && (error.path === undefined || (error.path.length === 1 && error.path[0] === rootKey)))
  );
}

const isExecutionResult = (result: unknown): result is ExecutionResult =>
  !!result && typeof result === "object" && !(Symbol.asyncIterator in result);
