import type { GraphiQLOptions } from "graphql-yoga";

/** The query GraphiQL opens with: it runs as it is once the Headers tab holds a key (checked against the schema by the tests). */
export const GRAPHIQL_EXAMPLE_QUERY = `# Put an API key in the Headers tab below ({"x-api-key": "fpk_…"}), then run this query (Ctrl-Enter).
# The Docs panel on the left lists every query, mutation and subscription.
query FirstUsers {
  users(limit: 5) {
    id
    email
    firstName
    externalId
    createdAt
  }
}
`;

/** The Headers tab's template: every operation needs a credential (an API key, or a session JWT as x-client-auth). */
export const GRAPHIQL_HEADERS = JSON.stringify({ "x-api-key": "" }, null, 2);

/**
 * GraphiQL with every script, style and editor worker inlined from the `@graphql-yoga/render-graphiql`
 * package, so the page asks nothing of another host (yoga's own page loads GraphiQL from unpkg). The
 * bundle is large (about 9 MB) and needed only when a browser opens /graphql: it is loaded then, once.
 * It opens on an example query and a headers template instead of the stock welcome text, whose first
 * query would be refused for want of a key.
 */
export async function renderOfflineGraphiQL(options: GraphiQLOptions): Promise<string> {
  const { renderGraphiQL } = await import("@graphql-yoga/render-graphiql");
  return renderGraphiQL({ ...options, title: "Fintech Platform API", defaultQuery: GRAPHIQL_EXAMPLE_QUERY, headers: GRAPHIQL_HEADERS });
}
