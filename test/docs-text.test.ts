import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

/** The README and docs/ (the binding contract under docs/contract is a copy, left as it is). */
const DOCS = ["README.md", ...readdirSync("docs").filter((name) => name.endsWith(".md")).map((name) => `docs/${name}`)];

/** What belongs to the project's history or a developer's machine, not to a description of the product. */
const NOT_PRODUCT: [string, RegExp][] = [
  ["issue or item numbers", /\b(?:issues?|items?) \d+/i],
  ["commit hashes", /(?<![-\w])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}(?![-\w])/],
  ["paths of a development machine", /(?:^|[\s`(<=])\/(?:work|home|tmp|Users|root)\//],
];

describe("the README and docs/ speak of the product only", () => {
  it.each(NOT_PRODUCT)("has no %s", (_what, pattern) => {
    const found = DOCS.flatMap((file) =>
      readFileSync(file, "utf8")
        .split("\n")
        .flatMap((line, i) => (pattern.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(found).toEqual([]);
  });
});

describe("the README stays short", () => {
  it("has at most 400 lines: depth goes to docs/", () => {
    expect(readFileSync("README.md", "utf8").trimEnd().split("\n").length).toBeLessThanOrEqual(400);
  });
});
