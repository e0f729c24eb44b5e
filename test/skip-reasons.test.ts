import { execFile } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

describe("the test run's reasons for skipped tests", () => {
  it("prints one line per skipped group with its reason as its file ends, again in a summary at the end, and says when a skip gave none", { timeout: 60_000 }, async () => {
    const output = await new Promise<string>((resolve, reject) =>
      execFile(
        join("node_modules", ".bin", "vitest"),
        ["run", "--config", "test/fixtures/skip-reasons/vitest.config.ts"],
        { env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" }, timeout: 50_000 },
        (err, stdout) => (err ? reject(err) : resolve(stdout)),
      ),
    );
    // As the file ends, before the summary: an interrupted run still explains the skips it reached.
    const live = output.slice(0, output.indexOf("Skipped 4 tests, by group:")).split("\n").filter((line) => line.startsWith("skipped "));
    expect(live).toEqual([
      "skipped needs A; needs B: sample.fixture.ts > a group with everything it needs > needs two things",
      "skipped needs the sample service: set SAMPLE_URL: sample.fixture.ts > a group that needs a service (2 tests)",
      "skipped no reason given: sample.fixture.ts > skipped without a reason",
    ]);
    const summary = output.slice(output.indexOf("Skipped 4 tests, by group:")).trim().split("\n");
    expect(summary).toEqual([
      "Skipped 4 tests, by group:",
      "  needs A; needs B: sample.fixture.ts > a group with everything it needs > needs two things",
      "  needs the sample service: set SAMPLE_URL: sample.fixture.ts > a group that needs a service (2 tests)",
      "  no reason given: sample.fixture.ts > skipped without a reason",
    ]);
  });
});
