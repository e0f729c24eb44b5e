import type { GraphiQLOptions } from "graphql-yoga";

/**
 * GraphiQL with every script, style and editor worker inlined from the `@graphql-yoga/render-graphiql`
 * package, so the page asks nothing of another host (yoga's own page loads GraphiQL from unpkg). The
 * bundle is large (about 9 MB) and needed only when a browser opens /graphql: it is loaded then, once.
 */
export async function renderOfflineGraphiQL(options: GraphiQLOptions): Promise<string> {
  const { renderGraphiQL } = await import("@graphql-yoga/render-graphiql");
  return renderGraphiQL({ ...options, title: "Fintech Platform API" });
}
