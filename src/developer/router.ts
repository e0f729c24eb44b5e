import type { Express } from "express";
import { printedSchema } from "../gateway/printed-schema.js";
import { openApiDocument } from "../rest/openapi.js";
import type { Route } from "../rest/route.js";
import { webhookEndpoint } from "../rest/provider-webhooks.js";
import { OPENAPI_PATH, PRINTED_SCHEMA_PATH, referencePage } from "./reference-page.js";

/** The OpenAPI document served at /v1/openapi.json for these REST routes (the provider webhook path included). */
export const publishedOpenApi = (routes: readonly Route[], options: { introspection: boolean }) =>
  openApiDocument([...routes, webhookEndpoint], { schemaPublished: options.introspection });

/**
 * What an integrator reads: the OpenAPI document, its reference page, and the printed GraphQL schema
 * (only while introspection is on: with it off, as in production, the schema is not published, here
 * or by a link). The reference page links only to what is served (GraphiQL is off in production).
 */
export function mountDeveloperPages(app: Express, routes: readonly Route[], options: { introspection: boolean; graphiql: boolean }) {
  const document = JSON.stringify(publishedOpenApi(routes, options));
  const sdl = printedSchema();
  app.get(OPENAPI_PATH, (_req, res) => void res.type("application/json").send(document));
  if (options.introspection) app.get(PRINTED_SCHEMA_PATH, (_req, res) => void res.type("text/plain").send(sdl));
  app.use("/docs", referencePage({ graphiql: options.graphiql, schema: options.introspection }));
}
