import { NoSchemaIntrospectionCustomRule as NoSchemaIntrospection, type ExecutionResult } from "graphql";
import { createYoga, handleStreamOrSingleExecutionResult, isAsyncIterable, type Plugin, type YogaServerInstance } from "graphql-yoga";
import { renderOfflineGraphiQL } from "./graphiql.js";
import type { PrismaClient } from "../generated/prisma/client.js";
import type { Logger } from "../logger.js";
import { graphqlMetrics } from "../metrics/graphql.js";
import type { Metrics } from "../metrics/metrics.js";
import type { Admission } from "../pipeline/admission.js";
import type { IdempotencyRecords } from "../pipeline/idempotency-records.js";
import { useIdempotency } from "../pipeline/idempotency.js";
import { useListAwareCost, useStaticQueryLimits } from "../pipeline/query-limits.js";
import { useSseStreamCaps, type OpenStreams } from "../pipeline/open-streams.js";
import type { TransportContext } from "../caller/request-info.js";
import { useAuditLog } from "../pipeline/audit.js";
import { usePermissions } from "../pipeline/permissions.js";
import { useStreamLifetime } from "../pipeline/stream-lifetime.js";
import { useTextInputRule } from "../pipeline/text-input.js";
import { useRestListInputs } from "../pipeline/rest-list-inputs.js";
import { useRestUnknownParameters } from "../pipeline/rest-unknown-parameters.js";
import { createContext, type Context, type Services } from "../graphql/context.js";
import { maskError, shapedResult } from "../graphql/errors.js";
import { sseEventIds } from "../events/sse.js";
import { useExactNumbers } from "../graphql/exact-numbers.js";
import { schema } from "./schema.js";

export type Yoga = YogaServerInstance<TransportContext, Context>;

/**
 * The one request pipeline. GraphQL over HTTP and SSE (yoga itself), the /v1 table and graphql-ws all
 * run operations through this instance's envelop, so each of these plugins applies on every
 * transport, in this order: admission (rate limits, credential), the audit log, REST's unknown
 * parameters, the text rule, REST's list inputs, the list-aware cost,
 * the permission rule, idempotency (so no replay reaches a credential the rule refuses), and the
 * lifetime of streams. Errors are shaped once, by `maskError`, with the id of
 * the request they answer (`shapeErrorsForRequest`).
 */
export function createGraphQLServer(options: {
  prisma: PrismaClient;
  services: Services;
  logger: Logger;
  graphiql: boolean;
  introspection: boolean;
  metrics: Metrics;
  admission: Admission;
  streams: OpenStreams;
  idempotency: IdempotencyRecords;
}): Yoga {
  const { services, logger, introspection } = options;
  return createYoga<TransportContext, Context>({
    schema,
    graphqlEndpoint: "/graphql",
    graphiql: options.graphiql ? { subscriptionsProtocol: "WS" } : false,
    renderGraphiQL: renderOfflineGraphiQL,
    landingPage: false,
    // CORS is the Express layer's, for every GraphQL request (src/app.ts).
    cors: false,
    // Bodies are read (100 kB at most) before yoga sees them; file uploads are not part of this API.
    multipart: false,
    logging: false,
    context: (initial) => createContext(initial, services, options.prisma),
    maskedErrors: { maskError: (error) => maskError(error, logger) },
    plugins: [
      shapeErrorsForRequest(logger),
      quoteRequestInYogaAnswers(logger),
      ...useStaticQueryLimits({ introspection }),
      maskValidationErrors(logger),
      ...(introspection ? [] : [disableIntrospection()]),
      options.admission.plugin,
      useAuditLog({ services, logger }),
      useRestUnknownParameters(logger),
      useTextInputRule(logger),
      useRestListInputs(logger),
      useListAwareCost(logger),
      usePermissions({ services }),
      useIdempotency({ records: options.idempotency, services, logger }),
      useSseStreamCaps({ streams: options.streams, services, logger }),
      useStreamLifetime({ watch: services.credentialWatch, services }),
      graphqlMetrics(options.metrics.registry),
      sseEventIds(),
      useExactNumbers(),
    ],
  });
}

/**
 * Every operation's errors, shaped by `maskError` with the id of the request they answer (carried by
 * the operation's context on every transport), so they quote it and an unexpected one is logged with
 * it. First in the list: its hooks also see the results later plugins set when they refuse an
 * operation; yoga's own masking, which runs after it, then leaves the shaped errors as they are.
 */
function shapeErrorsForRequest(logger: Logger): Plugin<TransportContext> {
  const shape = ({ args, result, setResult }: { args: { contextValue: TransportContext }; result: ExecutionResult; setResult(result: ExecutionResult): void }) =>
    setResult(shapedResult(result, logger, args.contextValue.requestInfo.requestId));
  return {
    onExecute: () => ({ onExecuteDone: (payload) => handleStreamOrSingleExecutionResult(payload, shape) }),
    onSubscribe: () => ({ onSubscribeResult: (payload) => handleStreamOrSingleExecutionResult(payload, shape) }),
  };
}

/**
 * yoga's own refusals on its HTTP path (a syntax error, a mutation over GET, no query) quote the
 * request too. Streams are left alone: what they carry comes from executions, shaped already.
 */
function quoteRequestInYogaAnswers(logger: Logger): Plugin<TransportContext> {
  return {
    onResultProcess({ result, setResult, serverContext }) {
      const requestId = (serverContext as Partial<TransportContext>).requestInfo?.requestId;
      if (!requestId || isAsyncIterable(result)) return;
      setResult(Array.isArray(result) ? result.map((one) => shapedResult(one, logger, requestId)) : shapedResult(result, logger, requestId));
    },
  };
}

/**
 * Document validation errors go through the one mapping too (BAD_USER_INPUT, 400), whatever the
 * transport, and quote the request they answer even when they come from the validation cache.
 */
function maskValidationErrors(logger: Logger): Plugin<TransportContext> {
  return {
    onValidate: ({ context }) => ({ result, setResult }) => {
      if (result.length) setResult(result.map((error) => maskError(error, logger, context.requestInfo.requestId)));
    },
  };
}

function disableIntrospection(): Plugin {
  return {
    onValidate({ addValidationRule }) {
      addValidationRule(NoSchemaIntrospection);
    },
  };
}
