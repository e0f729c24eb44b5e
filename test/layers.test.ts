import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import madge from "madge";
import { beforeAll, describe, expect, it } from "vitest";

/**
 * src's folders (and its root files), bottom first: each may import only what is listed before it, so
 * a domain folder reads knowing only what lies below it. A new folder must be given its place here.
 */
const LAYERS = [
  // the kernel: errors, logging, exact numbers, input rules
  "errors.ts", "logger.ts", "representation.ts", "exact-json.ts", "validation.ts", "metadata.ts",
  // infrastructure
  "db", "modes.ts", "metrics", "pubsub", "providers", "money",
  // who is calling, and the HTTP exchange every transport shares
  "caller", "http",
  // the schema kit: the Pothos builder, context, scalars, GraphQL errors
  "graphql",
  // the books and the chain's send side
  "ledger", "chain", "config.ts",
  // tenants, the event log, credentials
  "clients", "events", "keys", "auth",
  // the domains
  "users", "wallets", "developer-fees", "conversion", "deposits", "rail", "accounts", "cards", "withdrawals",
  "webhook-endpoints", "audit", "webhooks", "sandbox", "retention",
  // the request pipeline, the assembled schema and its transports, the /v1 table, the developer pages
  "pipeline", "gateway", "rest", "developer",
  // the composition root and the processes
  "services.ts", "first-run.ts", "admin", "workers.ts", "app.ts", "main.ts",
];

const SRC = fileURLToPath(new URL("../src", import.meta.url));
const layerOf = (module: string) => module.split("/")[0];

/** src's import graph (type-only and dynamic imports included), module paths relative to src. */
let imports: Record<string, string[]>;
/** Imports madge could not resolve to a file: packages' subpaths, or a broken relative import. */
let unresolved: string[];
/** Chains of modules that import each other in a circle (type-only imports count: they tie the modules' designs together). */
let cycles: string[][];

beforeAll(async () => {
  const graph = await madge(SRC, {
    fileExtensions: ["ts"],
    tsConfig: fileURLToPath(new URL("../tsconfig.json", import.meta.url)),
    excludeRegExp: [/^generated\//],
  });
  imports = graph.obj();
  unresolved = graph.warnings().skipped;
  cycles = graph.circular();
});

describe("layers point one way", () => {
  it("every folder and root file of src has its place in the layers", () => {
    const entries = readdirSync(SRC).filter((entry) => entry !== "generated" && !entry.endsWith(".d.ts"));
    expect(entries.filter((entry) => !LAYERS.includes(entry))).toEqual([]);
    expect(LAYERS.filter((layer) => !entries.includes(layer))).toEqual([]);
  });

  it("no folder imports from a folder above it (nor a root file from one above it)", () => {
    const upward = Object.entries(imports).flatMap(([module, targets]) =>
      targets
        .filter((target) => LAYERS.indexOf(layerOf(target)) > LAYERS.indexOf(layerOf(module)))
        .map((target) => `${module} → ${target}`),
    );
    expect(upward).toEqual([]);
  });

  it("no import cycle anywhere in src (the generated Prisma client aside): each module's imports point one way", () => {
    expect(cycles.map((cycle) => cycle.join(" → "))).toEqual([]);
  });

  it("sees every import inside src, so none escapes the rule", () => {
    expect(unresolved.filter((specifier) => specifier.startsWith("."))).toEqual([]);
    expect(imports["app.ts"]).toContain("rest/router.ts");
    expect(imports["users/service.ts"]).toContain("users/representation.ts");
    expect(imports["rest/routes/users.ts"]).toContain("users/representation.ts");
    expect(imports["pipeline/admission.ts"]).toContain("graphql/context.ts");
  });
});
