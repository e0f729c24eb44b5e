import { usePrometheus } from "@graphql-yoga/plugin-prometheus";
import type { Registry } from "prom-client";

/**
 * GraphQL operations (HTTP, SSE and graphql-ws), their durations and errors, by operation name and
 * type. The REST surface runs its operations outside yoga: its requests are in the HTTP metrics.
 */
export const graphqlMetrics = (registry: Registry) =>
  usePrometheus({
    registry,
    endpoint: false,
    skipIntrospection: true,
    metrics: { graphql_envelop_request: true, graphql_envelop_request_duration: true, graphql_envelop_error_result: true },
  });
