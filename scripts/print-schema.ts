// Writes the code's GraphQL schema to schema.graphql and its gql.tada types to src/graphql/graphql-env.d.ts
// (which type the REST table's operations), or with --check fails when either differs from the code.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { printedSchema } from "../src/gateway/printed-schema.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const schemaFile = join(root, "schema.graphql");
const typesFile = join(root, "src/graphql/graphql-env.d.ts");

/** gql.tada's own generator, reading schema.graphql as tsconfig.json's gql.tada plugin entry names it. */
const generateTypes = (output: string) =>
  execFileSync(join(root, "node_modules/.bin/gql.tada"), ["generate-output", "--output", output], { cwd: root, stdio: ["ignore", "ignore", "inherit"] });

const read = (file: string) => {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return ""; // a missing file differs like any other
  }
};

const printed = printedSchema();
if (process.argv.includes("--check")) {
  if (read(schemaFile) !== printed) {
    process.stderr.write("schema.graphql is out of date: run `npm run schema:print` and commit it\n");
    process.exit(1);
  }
  const dir = mkdtempSync(join(tmpdir(), "graphql-env-"));
  try {
    generateTypes(join(dir, "graphql-env.d.ts"));
    if (read(join(dir, "graphql-env.d.ts")) !== read(typesFile)) {
      process.stderr.write("src/graphql/graphql-env.d.ts is out of date: run `npm run schema:print` and commit it\n");
      process.exit(1);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  process.stdout.write("schema.graphql and src/graphql/graphql-env.d.ts match the code\n");
} else {
  writeFileSync(schemaFile, printed);
  generateTypes(typesFile);
  process.stdout.write("schema.graphql and src/graphql/graphql-env.d.ts written\n");
}
