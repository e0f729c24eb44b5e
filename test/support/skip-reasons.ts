import type { Reporter, TestCase, TestModule, TestSuite } from "vitest/node";

const NO_REASON = "no reason given";

/**
 * Ends the run with one line per skipped group and why (the reason `needs()` recorded), so that a run
 * on the embedded database says which tests it could not run and what would run them.
 */
export default class SkipReasons implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>) {
    const groups = new Map<string, { reason: string; where: string; count: number }>();
    for (const module of testModules) {
      for (const test of module.children.allTests("skipped")) {
        const { reason, group } = skippedBy(test);
        const where = `${module.relativeModuleId} > ${group.fullName}`;
        const key = `${reason}\n${where}`;
        groups.set(key, { reason, where, count: (groups.get(key)?.count ?? 0) + 1 });
      }
    }
    if (!groups.size) return;
    const lines = [...groups.values()]
      .sort((a, b) => a.reason.localeCompare(b.reason) || a.where.localeCompare(b.where))
      .map(({ reason, where, count }) => `  ${reason}: ${where}${count > 1 ? ` (${count} tests)` : ""}`);
    const total = [...groups.values()].reduce((sum, group) => sum + group.count, 0);
    process.stdout.write(`\nSkipped ${total} tests, by group:\n${lines.join("\n")}\n`);
  }
}

/** The outermost group (or the test itself) that carries the skip's reason. */
function skippedBy(test: TestCase): { reason: string; group: TestCase | TestSuite } {
  let found: { reason: string; group: TestCase | TestSuite } | undefined;
  for (let task: TestCase | TestSuite | TestModule = test; task.type !== "module"; task = task.parent) {
    const reason = task.meta().skipReason;
    if (reason) found = { reason, group: task };
  }
  return found ?? { reason: NO_REASON, group: test };
}
