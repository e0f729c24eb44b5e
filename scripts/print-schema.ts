// Writes the code's GraphQL schema to schema.graphql, or with --check fails when they differ.
import { readFileSync, writeFileSync } from "node:fs";
import { printedSchema } from "../src/graphql/printed-schema.js";

const file = new URL("../schema.graphql", import.meta.url);
const printed = printedSchema();
if (process.argv.includes("--check")) {
  let committed = "";
  try {
    committed = readFileSync(file, "utf8");
  } catch {
    // a missing file differs like any other
  }
  if (committed !== printed) {
    process.stderr.write("schema.graphql is out of date: run `npm run schema:print` and commit it\n");
    process.exit(1);
  }
  process.stdout.write("schema.graphql matches the code\n");
} else {
  writeFileSync(file, printed);
  process.stdout.write("schema.graphql written\n");
}
