import { Router } from "express";
import { printedSchema } from "../graphql/printed-schema.js";
import { openApiDocument } from "../rest/openapi.js";
import type { Route } from "../rest/route.js";
import { webhookEndpoint } from "../webhooks/router.js";
import { referencePage } from "./reference-page.js";

/**
 * What an integrator reads: the OpenAPI document, its reference page, and the printed GraphQL schema
 * (only while introspection is on: with it off, the schema is not published here either).
 */
export function developerRouter(routes: readonly Route[], options: { introspection: boolean }): Router {
  const document = JSON.stringify(openApiDocument([...routes, webhookEndpoint]));
  const sdl = printedSchema();
  const router = Router();
  router.get("/v1/openapi.json", (_req, res) => void res.type("application/json").send(document));
  if (options.introspection) router.get("/graphql/schema.graphql", (_req, res) => void res.type("text/plain").send(sdl));
  router.use("/docs", referencePage());
  return router;
}
