import { usePrometheus } from "@graphql-yoga/plugin-prometheus";
import type { Registry } from "prom-client";

/**
 * GraphQL operations (HTTP, SSE and graphql-ws), their durations and errors, by operation type. Not
 * by operation name, nor by URL (the plugin's HTTP histogram would label GET query strings, with
 * their variables): a caller could read other callers' queries and grow the series without bound.
 * The REST surface runs its operations outside yoga: its requests are in the HTTP metrics.
 */
export const graphqlMetrics = (registry: Registry) =>
  usePrometheus({
    registry,
    endpoint: false,
    skipIntrospection: true,
    metrics: {
      graphql_envelop_request: true,
      graphql_envelop_request_duration: true,
      graphql_envelop_error_result: true,
      graphql_yoga_http_duration: false,
    },
    labels: { operationName: false, url: false },
  });
