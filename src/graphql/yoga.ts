import { NoSchemaIntrospectionCustomRule as NoSchemaIntrospection } from "graphql";
import { createYoga, type Plugin, type YogaServerInstance } from "graphql-yoga";
import type { PrismaClient } from "../generated/prisma/client.js";
import type { Logger } from "../logger.js";
import { graphqlMetrics } from "../metrics/graphql.js";
import type { Metrics } from "../metrics/metrics.js";
import { useAdmission } from "../pipeline/admission.js";
import type { IdempotencyRecords } from "../pipeline/idempotency-records.js";
import { useIdempotency } from "../pipeline/idempotency.js";
import { useListAwareCost, useStaticQueryLimits } from "../pipeline/query-limits.js";
import { useSseStreamCaps, type OpenStreams } from "../pipeline/open-streams.js";
import type { RateLimits } from "../pipeline/rate-limits.js";
import type { TransportContext } from "../pipeline/request-info.js";
import { useStreamLifetime } from "../pipeline/stream-lifetime.js";
import { useTextInputRule } from "../pipeline/text-input.js";
import type { Services } from "../services.js";
import { createContext, type Context } from "./context.js";
import { forThisRequest, maskError } from "./errors.js";
import type { ValidatedDocuments } from "./json-post.js";
import { sseEventIds } from "../events/sse.js";
import { schema } from "./schema.js";

export type Yoga = YogaServerInstance<TransportContext, Context>;

/**
 * The one request pipeline. GraphQL over HTTP and SSE (yoga itself), the /v1 table and graphql-ws all
 * run operations through this instance's envelop, so each of these plugins applies on every
 * transport, in this order: admission (rate limits, credential), the text rule, the list-aware cost,
 * idempotency, and the lifetime of streams. Errors are shaped once, by `maskError`.
 */
export function createGraphQLServer(options: {
  prisma: PrismaClient;
  services: Services;
  logger: Logger;
  graphiql: boolean;
  introspection: boolean;
  metrics: Metrics;
  rateLimits: RateLimits;
  streams: OpenStreams;
  idempotency: IdempotencyRecords;
  validatedDocuments: ValidatedDocuments;
}): Yoga {
  const { services, logger, introspection } = options;
  return createYoga<TransportContext, Context>({
    schema,
    graphqlEndpoint: "/graphql",
    graphiql: options.graphiql ? { subscriptionsProtocol: "WS" } : false,
    landingPage: false,
    // Bodies are read (100 kB at most) before yoga sees them; file uploads are not part of this API.
    multipart: false,
    logging: false,
    context: (initial) => createContext(initial, services, options.prisma),
    maskedErrors: { maskError: (error) => maskError(error, logger) },
    plugins: [
      ...useStaticQueryLimits({ introspection }),
      maskValidationErrors(logger),
      ...(introspection ? [] : [disableIntrospection()]),
      useAdmission({ services, rateLimits: options.rateLimits, introspection, logger }),
      useTextInputRule(logger),
      useListAwareCost(logger),
      useIdempotency({ records: options.idempotency, services, logger }),
      useSseStreamCaps({ streams: options.streams, services, logger }),
      useStreamLifetime({ watch: services.credentialWatch, services }),
      graphqlMetrics(options.metrics.registry),
      sseEventIds(),
      options.validatedDocuments.plugin(),
    ],
  });
}

/**
 * Document validation errors go through the one mapping too (BAD_USER_INPUT, 400), whatever the
 * transport, and quote the request they answer even when they come from the validation cache.
 */
function maskValidationErrors(logger: Logger): Plugin {
  return {
    onValidate: () => ({ result, setResult }) => {
      if (result.length) setResult(result.map((error) => forThisRequest(maskError(error, logger))));
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
