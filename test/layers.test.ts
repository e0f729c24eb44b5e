import { fileURLToPath } from "node:url";
import madge from "madge";
import { beforeAll, describe, expect, it } from "vitest";

/** The /v1 route table and its helpers: what shapes HTTP, above the services. */
const REST = /^rest\//;
/** The HTTP wiring, which mounts the route table and so sits above it. */
const HTTP_WIRING = [/^app\.ts$/, /^developer\//, /^http\//, /^webhooks\/router\.ts$/];

/** src's import graph (type-only and dynamic imports included), module paths relative to src. */
let imports: Record<string, string[]>;
/** Imports madge could not resolve to a file: packages' subpaths, or a broken relative import. */
let unresolved: string[];
/** Chains of modules that import each other in a circle (type-only imports count: they tie the modules' designs together). */
let cycles: string[][];

beforeAll(async () => {
  const graph = await madge(fileURLToPath(new URL("../src", import.meta.url)), {
    fileExtensions: ["ts"],
    tsConfig: fileURLToPath(new URL("../tsconfig.json", import.meta.url)),
    excludeRegExp: [/^generated\//],
  });
  imports = graph.obj();
  unresolved = graph.warnings().skipped;
  cycles = graph.circular();
});

describe("layers point one way", () => {
  it("no module below the HTTP wiring imports from src/rest", () => {
    const upward = Object.entries(imports)
      .filter(([module]) => !REST.test(module) && !HTTP_WIRING.some((wiring) => wiring.test(module)))
      .flatMap(([module, targets]) => targets.filter((target) => REST.test(target)).map((target) => `${module} → ${target}`));
    expect(upward).toEqual([]);
  });

  it("no import cycle anywhere in src (the generated Prisma client aside): each module's imports point one way", () => {
    expect(cycles.map((cycle) => cycle.join(" → "))).toEqual([]);
  });

  it("sees every import inside src, so none escapes the rule", () => {
    expect(unresolved.filter((specifier) => specifier.startsWith("."))).toEqual([]);
    expect(imports["app.ts"]).toContain("rest/router.ts");
    expect(imports["events/objects.ts"]).toContain("users/representation.ts");
    expect(imports["rest/routes/users.ts"]).toContain("users/representation.ts");
  });
});
