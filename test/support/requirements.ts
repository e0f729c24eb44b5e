import { existsSync } from "node:fs";
import type { TestOptions } from "vitest";
import { testDatabaseUrl } from "./server.js";

declare module "vitest" {
  interface TaskMeta {
    /** Why a test or group is skipped here; test/support/skip-reasons.ts prints it at the end of the run. */
    skipReason?: string;
  }
}

export const CHROMIUM = "/usr/bin/chromium";

/** What some tests need beyond Node, each undefined when present, else the reason they are skipped. */
export const REQUIREMENTS = {
  postgres: testDatabaseUrl ? undefined : "needs PostgreSQL: set TEST_DATABASE_URL",
  redisUrl: process.env.TEST_REDIS_URL ? undefined : "needs Redis: set TEST_REDIS_URL",
  chromium: existsSync(CHROMIUM) ? undefined : `needs Chromium at ${CHROMIUM} (Debian: apt-get install chromium)`,
};

/**
 * Options for `describe`/`it` that skip the group or test when a requirement is missing, keeping the
 * reason for the run's summary: `it("…", needs(REQUIREMENTS.postgres), async () => …)`.
 */
export function needs(...requirements: (string | undefined)[]): TestOptions {
  const missing = requirements.filter((reason): reason is string => reason !== undefined);
  return missing.length ? { skip: true, meta: { skipReason: missing.join("; ") } } : {};
}
