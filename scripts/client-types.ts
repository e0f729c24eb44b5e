// Writes examples/generated/api.d.ts, the openapi-typescript types of the OpenAPI document a
// development server serves (sandbox paths included), built in-process from the route table; with
// --check fails when the committed file differs (the OpenAPI and the server drifted apart).
//   tsx scripts/client-types.ts [--check] [file]        (file defaults to examples/generated/api.d.ts)
import { readFileSync, writeFileSync } from "node:fs";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import openapiTS, { astToString, COMMENT_HEADER, type OpenAPI3 } from "openapi-typescript";
import { publishedOpenApi } from "../src/developer/router.js";
import { routes, sandboxRoutes } from "../src/rest/routes/index.js";

const typesFile = process.argv.slice(2).find((arg) => !arg.startsWith("--")) ?? fileURLToPath(new URL("../examples/generated/api.d.ts", import.meta.url));

const document = publishedOpenApi([...routes, ...sandboxRoutes], { introspection: true });
const generated = COMMENT_HEADER + astToString(await openapiTS(document as unknown as OpenAPI3));

const shown = relative(process.cwd(), typesFile);

if (process.argv.includes("--check")) {
  let committed = "";
  try {
    committed = readFileSync(typesFile, "utf8");
  } catch {
    // a missing file differs like any other
  }
  if (committed !== generated) {
    process.stderr.write(`${shown} is out of date: run \`npm run client:types\` and commit it\n`);
    process.exit(1);
  }
  process.stdout.write(`${shown} matches the OpenAPI document\n`);
} else {
  writeFileSync(typesFile, generated);
  process.stdout.write(`${shown} written\n`);
}
