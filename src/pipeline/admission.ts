import { parse, type DocumentNode, type ExecutionResult, type OperationDefinitionNode } from "graphql";
import type { Plugin } from "graphql-yoga";
import { authenticationOf, type Services } from "../graphql/context.js";
import { maskError } from "../graphql/errors.js";
import type { Logger } from "../logger.js";
import { isPublicOperation, isSignInOperation, selectedOperation } from "./operations.js";
import { authenticateWithinBudget } from "./auth-failures.js";
import type { RateLimits } from "./rate-limits.js";
import type { TransportContext } from "../caller/request-info.js";

/** What admission remembers of an operation, on its initial context (properties, not per-request WeakMap entries). */
const ADMITTED = Symbol("admitted");
const SIGN_IN_CHARGED = Symbol("signInCharged");
type AdmissionScope = TransportContext & { [ADMITTED]?: Promise<void>; [SIGN_IN_CHARGED]?: true };

export type Admission = {
  /** The pipeline's plugin: every operation, on every transport. */
  plugin: Plugin<TransportContext>;
  /**
   * A request refused at the HTTP edge before it has an operation (GraphQL over HTTP with parameters
   * that cannot be run): its caller is admitted first, as for any operation that is not public, so
   * a caller without a valid credential hears UNAUTHENTICATED, and the refusal draws on its budgets.
   * Rejects with the admission's refusal.
   */
  admitBeforeRefusal(scope: TransportContext): Promise<void>;
};

/**
 * Admission, the first step of every operation on every transport: the caller's IP budget, then its
 * credential unless the operation is public (held to the address's budget of failed authentications,
 * src/pipeline/auth-failures.ts), then its client's budget (and the sign-in budget for
 * OTP operations). Nothing about the request is validated before this, so a caller without a valid
 * credential gets UNAUTHENTICATED whatever else is wrong with what it sent.
 */
export function createAdmission(deps: { services: Services; rateLimits: RateLimits; introspection: boolean; logger: Logger }): Admission {
  async function admit(scope: TransportContext, operation: OperationDefinitionNode | undefined) {
    const { ip } = scope.requestInfo;
    await deps.rateLimits.ip(ip);
    if (isPublicOperation(operation, deps.introspection)) return;
    const { clientId } = await authenticateWithinBudget(deps.rateLimits, ip, () => authenticationOf(scope, deps.services));
    scope.requestInfo.clientId = clientId;
    await deps.rateLimits.client(clientId);
  }

  /** Once per operation (GraphQL over HTTP may ask before parsing, and again, answered from here, before executing). */
  function admitOnce(scope: AdmissionScope, operation: OperationDefinitionNode | undefined) {
    scope[ADMITTED] ??= admit(scope, operation);
    return scope[ADMITTED];
  }

  /**
   * Sign-in operations also draw on their own per-IP budget, whoever sends them (a credential does not
   * exempt an OTP request), once per operation, as soon as the operation is known.
   */
  async function chargeSignIn(scope: AdmissionScope, operation: OperationDefinitionNode | undefined) {
    if (!isSignInOperation(operation) || scope[SIGN_IN_CHARGED]) return;
    scope[SIGN_IN_CHARGED] = true;
    await deps.rateLimits.signIn(scope.requestInfo.ip);
  }

  const refusal = (error: unknown, scope: TransportContext): ExecutionResult => ({ errors: [maskError(error, deps.logger, scope.requestInfo.requestId)] });
  const gate = async (
    scope: TransportContext,
    document: DocumentNode | undefined,
    operationName: string | null | undefined,
    refuse: (result: ExecutionResult) => void,
  ) => {
    try {
      const operation = selectedOperation(document, operationName);
      await admitOnce(scope, operation);
      await chargeSignIn(scope, operation);
    } catch (error) {
      refuse(refusal(error, scope));
    }
  };

  const plugin: Plugin<TransportContext> = {
    async onParams({ params, context, setResult }) {
      // GraphQL over HTTP: admitted before yoga parses and validates what was sent. Only a caller
      // without a valid credential needs the document read here (to see whether it is public);
      // an authenticated one is admitted on its credential alone, which saves a parse per request.
      const scope = context as TransportContext;
      const authenticated = await authenticationOf(scope, deps.services).then(() => true, () => false);
      await gate(scope, authenticated ? undefined : parsedOrUndefined(params.query), params.operationName, setResult);
    },
    async onExecute({ args, setResultAndStopExecution }) {
      await gate(args.contextValue, args.document, args.operationName, setResultAndStopExecution);
    },
    async onSubscribe({ args, setResultAndStopExecution }) {
      await gate(args.contextValue, args.document, args.operationName, setResultAndStopExecution);
    },
  };
  return { plugin, admitBeforeRefusal: (scope) => admitOnce(scope, undefined) };
}

/** A document that does not parse is not a public one: its sender must be authenticated to hear about its syntax. */
function parsedOrUndefined(query: string | undefined): DocumentNode | undefined {
  try {
    return query ? parse(query) : undefined;
  } catch {
    return undefined;
  }
}
