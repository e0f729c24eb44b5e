import type { Express } from "express";
import { printedSchema } from "../graphql/printed-schema.js";
import { openApiDocument } from "../rest/openapi.js";
import type { Route } from "../rest/route.js";
import { webhookEndpoint } from "../webhooks/router.js";
import { referencePage } from "./reference-page.js";

export const OPENAPI_PATH = "/v1/openapi.json";

/**
 * What an integrator reads: the OpenAPI document, its reference page, and the printed GraphQL schema
 * (only while introspection is on: with it off, the schema is not published here either).
 */
export function mountDeveloperPages(app: Express, routes: readonly Route[], options: { introspection: boolean }) {
  const document = JSON.stringify(openApiDocument([...routes, webhookEndpoint]));
  const sdl = printedSchema();
  app.get(OPENAPI_PATH, (_req, res) => void res.type("application/json").send(document));
  if (options.introspection) app.get("/graphql/schema.graphql", (_req, res) => void res.type("text/plain").send(sdl));
  app.use("/docs", referencePage());
}
