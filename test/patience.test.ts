import { availableParallelism, loadavg } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { patience, patient } from "./support/patience.js";
import { samplesOf } from "./support/readme-samples.js";

const configured = process.env.TEST_PATIENCE;
afterEach(() => {
  if (configured === undefined) delete process.env.TEST_PATIENCE;
  else process.env.TEST_PATIENCE = configured;
});

describe("test bounds stretch with the machine's load", () => {
  it("by TEST_PATIENCE when set, refusing a factor below 1 or not a number", () => {
    process.env.TEST_PATIENCE = "3";
    expect(patient(20_000)).toBe(60_000);
    for (const bad of ["0.5", "fast", "-2"]) {
      process.env.TEST_PATIENCE = bad;
      expect(() => patience()).toThrow(/TEST_PATIENCE must be a number of at least 1/);
    }
  });

  it("else by the load per core, never below 1", () => {
    delete process.env.TEST_PATIENCE;
    const expected = Math.max(1, loadavg()[0]! / availableParallelism());
    // The load moves between two reads: the factor lies around the one read here.
    expect(patience()).toBeGreaterThanOrEqual(1);
    expect(Math.abs(patience() - expected)).toBeLessThan(Math.max(1, expected / 2));
  });
});

describe("the README's samples are found by section, fences indented or not", () => {
  it("names each block's language and its ## section", () => {
    const markdown = ["## One", "```sh", "echo a", "```", "### Sub", "   ```ts", "   const x = 1;", "   ```", "## Two", "```", "plain", "```"].join("\n");
    expect(samplesOf(markdown)).toEqual([
      { lang: "sh", code: "echo a", section: "One", line: 2 },
      { lang: "ts", code: "const x = 1;", section: "One", line: 6 },
      { lang: "", code: "plain", section: "Two", line: 10 },
    ]);
  });
});
