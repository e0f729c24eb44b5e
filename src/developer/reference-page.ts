import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { Router } from "express";

export const OPENAPI_PATH = "/v1/openapi.json";
export const PRINTED_SCHEMA_PATH = "/graphql/schema.graphql";

const swaggerUiDir = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
/** The only files of swagger-ui-dist the page needs (its own index.html would load the Petstore from the internet). */
const ASSETS = ["swagger-ui.css", "swagger-ui-bundle.js", "favicon-32x32.png"];

/** Nothing but this server: the page works offline and tells no third party who reads it. */
const CONTENT_SECURITY_POLICY = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; object-src 'none'; frame-ancestors 'none'";

const page = (links: string) => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Fintech Platform API reference</title>
  <link rel="icon" href="/docs/assets/favicon-32x32.png">
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
  <style>
    body { margin: 0; font-family: sans-serif; }
    nav { padding: 12px 20px; background: #1b1f24; color: #fff; }
    nav a { color: #9cdcfe; margin-right: 18px; }
  </style>
</head>
<body>
  <nav>
    <strong>Fintech Platform API</strong> &nbsp;
    ${links}
  </nav>
  <div id="reference"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

/** validatorUrl null: Swagger UI would otherwise send the document to its public validator for a badge. */
const INIT = `window.ui = SwaggerUIBundle({
  url: "/v1/openapi.json",
  dom_id: "#reference",
  validatorUrl: null,
  deepLinking: true,
  tryItOutEnabled: false,
  presets: [SwaggerUIBundle.presets.apis],
});
`;

/** What else this server publishes, each linked from the page only when it is served. */
export type PublishedPages = { graphiql: boolean; schema: boolean };

/** GET /docs: the OpenAPI reference rendered by Swagger UI, every asset served from here. */
export function referencePage(published: PublishedPages): Router {
  const links = [
    ...(published.graphiql ? ['<a href="/graphql">GraphiQL</a>'] : []),
    ...(published.schema ? [`<a href="${PRINTED_SCHEMA_PATH}">GraphQL schema (SDL)</a>`] : []),
    `<a href="${OPENAPI_PATH}">OpenAPI 3.1 (JSON)</a>`,
  ];
  const html = page(links.join("\n    "));
  const router = Router();
  router.use((_req, res, next) => {
    res.setHeader("Content-Security-Policy", CONTENT_SECURITY_POLICY);
    next();
  });
  router.get("/", (_req, res) => void res.type("html").send(html));
  router.get("/init.js", (_req, res) => void res.type("application/javascript").send(INIT));
  for (const asset of ASSETS) {
    router.get(`/assets/${asset}`, (_req, res) => res.sendFile(join(swaggerUiDir, asset)));
  }
  return router;
}
