import { defineConfig } from "vitest/config";
import { HOOK_TIMEOUT_MS, TEST_TIMEOUT_MS } from "./test/support/patience.js";
import { testDatabaseUrl } from "./test/support/test-database.js";

export default defineConfig({
  // One graphql module for everyone: the packages load its CommonJS build, so the tests must too.
  resolve: { alias: [{ find: /^graphql$/, replacement: "graphql/index.js" }] },
  test: {
    include: ["test/**/*.test.ts"],
    // Bounds on an idle machine; each file stretches them by the load it starts under (test/support/patience.ts).
    testTimeout: TEST_TIMEOUT_MS,
    hookTimeout: HOOK_TIMEOUT_MS,
    setupFiles: ["./test/support/patience-setup.ts"],
    pool: "forks",
    // On the embedded database a worker runs its files one after another in one process: the modules
    // (the app, PGlite's WebAssembly) load once per worker, not once per file, and each file still
    // starts its own server and database (test/support/server.ts). On PostgreSQL the files share one
    // database, so each keeps a process of its own: whatever connection a file leaves behind ends
    // with it (a transaction left open holds back every tenant's event feed).
    isolate: Boolean(testDatabaseUrl),
    // One migrated embedded database for the run, which each test server starts from.
    globalSetup: ["./test/support/embedded-snapshot.ts"],
    // Two cores here: more files at once only queue.
    maxWorkers: 2,
    // The default report, then one line per skipped group saying why (test/support/requirements.ts).
    reporters: ["default", "./test/support/skip-reasons.ts"],
  },
});
