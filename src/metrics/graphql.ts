import { usePrometheus } from "@graphql-yoga/plugin-prometheus";
import type { Registry } from "prom-client";

/**
 * GraphQL operations (HTTP, SSE and graphql-ws), their durations and errors, by operation type. Not
 * by operation name, nor by URL (the plugin's HTTP histogram would label GET query strings, with
 * their variables): a caller could read other callers' queries and grow the series without bound.
 * The REST surface runs its operations outside yoga: its requests are in the HTTP metrics. The
 * plugin's other metrics are on by default and are turned off by name: the per-phase histograms,
 * the summary (quantiles per observation) and the deprecated-field counter (a walk of every
 * document) cost more on each request than the lookup itself.
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
      graphql_envelop_request_time_summary: false,
      graphql_envelop_deprecated_field: false,
      graphql_envelop_phase_parse: false,
      graphql_envelop_phase_validate: false,
      graphql_envelop_phase_context: false,
      graphql_envelop_phase_execute: false,
      graphql_envelop_phase_subscribe: false,
      graphql_envelop_schema_change: false,
      graphql_envelop_execute_resolver: false,
      graphql_yoga_http_duration: false,
    },
    labels: { operationName: false, url: false },
  });
