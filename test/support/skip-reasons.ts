import type { Reporter, TestCase, TestModule, TestSuite } from "vitest/node";

const NO_REASON = "no reason given";

type SkippedGroup = { reason: string; where: string; count: number };

/**
 * Says why tests were skipped (the reason `needs()` recorded): as each file ends, a line per skipped
 * group, so that an interrupted run explains the skips it reached; and at the end of the run, all of
 * them again in one list, so that a run on the embedded database says which tests it could not run
 * and what would run them.
 */
export default class SkipReasons implements Reporter {
  onTestModuleEnd(module: TestModule) {
    const groups = skippedGroups([module]);
    if (groups.length) process.stdout.write(`${groups.map((group) => `skipped ${line(group)}`).join("\n")}\n`);
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>) {
    const groups = skippedGroups(testModules);
    if (!groups.length) return;
    const total = groups.reduce((sum, group) => sum + group.count, 0);
    process.stdout.write(`\nSkipped ${total} tests, by group:\n${groups.map((group) => `  ${line(group)}`).join("\n")}\n`);
  }
}

const line = ({ reason, where, count }: SkippedGroup) => `${reason}: ${where}${count > 1 ? ` (${count} tests)` : ""}`;

function skippedGroups(testModules: ReadonlyArray<TestModule>): SkippedGroup[] {
  const groups = new Map<string, SkippedGroup>();
  for (const module of testModules) {
    for (const test of module.children.allTests("skipped")) {
      const { reason, group } = skippedBy(test);
      const where = `${module.relativeModuleId} > ${group.fullName}`;
      const key = `${reason}\n${where}`;
      groups.set(key, { reason, where, count: (groups.get(key)?.count ?? 0) + 1 });
    }
  }
  return [...groups.values()].sort((a, b) => a.reason.localeCompare(b.reason) || a.where.localeCompare(b.where));
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
