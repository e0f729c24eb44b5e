import { describe, expect, it } from "vitest";
import { needs, REQUIREMENTS } from "./support/requirements.js";
import { runCrashScenario } from "./support/crash-run.js";
import { testDatabaseUrl } from "./support/server.js";
import { patient } from "./support/patience.js";

// The short run; `npm run crash-test` runs a longer one (same checks).
describe("crash safety under mixed money traffic (PostgreSQL)", needs(REQUIREMENTS.postgres), () => {
  it("after SIGKILLs at random moments and restarts, every retried key answers its first result, nothing is lost or moved twice, no key is stuck, and every event arrives", async () => {
    const report = await runCrashScenario({ databaseUrl: testDatabaseUrl!, kills: 3, maxRunMs: 1500, senders: 6, users: 3 });
    expect(report.problems).toEqual([]);
    expect(report.unanswered, "some requests lost their answer to a kill").toBeGreaterThan(0);
    expect(report.cutOffThenResent, "a send cut off by a kill was resent under its webhook-id").toBeGreaterThan(0);
    expect(report.retried).toBe(report.requests);
  }, patient(170_000));
});
