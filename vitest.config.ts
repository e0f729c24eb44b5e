import { defineConfig } from "vitest/config";

export default defineConfig({
  // One graphql module for everyone: the packages load its CommonJS build, so the tests must too.
  resolve: { alias: [{ find: /^graphql$/, replacement: "graphql/index.js" }] },
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // A worker runs its files one after another in one process: the modules (the app, PGlite's
    // WebAssembly) load once per worker, not once per file. Each file still starts its own server
    // and database, and stops them (test/support/server.ts).
    isolate: false,
    // One migrated embedded database for the run, which each test server starts from.
    globalSetup: ["./test/support/embedded-snapshot.ts"],
    // Two cores here: more files at once only queue.
    maxWorkers: 2,
    // The default report, then one line per skipped group saying why (test/support/requirements.ts).
    reporters: ["default", "./test/support/skip-reasons.ts"],
  },
});
