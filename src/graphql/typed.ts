import { initGraphQLTada } from "gql.tada";
import type { introspection } from "./graphql-env.js";

/**
 * `graphql(...)` documents typed from schema.graphql (through the generated graphql-env.d.ts, kept
 * current by `npm run schema:print`): their results and variables are checked by tsc, so a renamed
 * field breaks the type-check of every operation that reads it. Fragments are not masked.
 */
export const graphql = initGraphQLTada<{
  introspection: introspection;
  disableMasking: true;
  scalars: { ID: string; DateTime: string; Date: string; Decimal: string; JSON: unknown };
}>();

export type { FragmentOf, ResultOf, TadaDocumentNode, VariablesOf } from "gql.tada";
