import { Router } from "express";
import { printedSchema } from "../graphql/printed-schema.js";
import { openApiDocument } from "../rest/openapi.js";
import type { Route } from "../rest/route.js";
import { webhookEndpoint } from "../webhooks/router.js";
import { referencePage } from "./reference-page.js";

/** What an integrator reads: the OpenAPI document, its reference page, and the printed GraphQL schema. */
export function developerRouter(routes: readonly Route[]): Router {
  const document = JSON.stringify(openApiDocument([...routes, webhookEndpoint]));
  const sdl = printedSchema();
  const router = Router();
  router.get("/v1/openapi.json", (_req, res) => void res.type("application/json").send(document));
  router.get("/graphql/schema.graphql", (_req, res) => void res.type("text/plain").send(sdl));
  router.use("/docs", referencePage());
  return router;
}
