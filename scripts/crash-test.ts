// npm run crash-test -- [--kills 12] [--max-run-ms 4000] [--senders 8] [--users 5] [--chain on|off]
// SIGKILLs the server at random moments during mixed money traffic on PostgreSQL, restarts it, retries
// every request under its Idempotency-Key and checks what must hold (see test/support/crash-run.ts).
// With --chain on (the default) BASE is live on an anvil: USDC withdrawals are sent on chain, and the
// token's logs must show exactly one transfer per COMPLETED withdrawal, none per FAILED one, none unknown.
// Needs TEST_DATABASE_URL (or DATABASE_URL): the run creates its own database beside it, and drops it.
import { parseArgs } from "node:util";
import { runCrashScenario } from "../test/support/crash-run.js";

const { values } = parseArgs({
  options: { kills: { type: "string", default: "12" }, "max-run-ms": { type: "string", default: "4000" }, senders: { type: "string", default: "8" }, users: { type: "string", default: "5" }, chain: { type: "string", default: "on" } },
});
const databaseUrl = process.env.TEST_DATABASE_URL || process.env.DATABASE_URL;
if (!databaseUrl) {
  process.stderr.write("Set TEST_DATABASE_URL (a PostgreSQL URL): the crash run needs PostgreSQL.\n");
  process.exit(2);
}
const started = Date.now();
const report = await runCrashScenario({
  databaseUrl,
  kills: Number(values.kills),
  maxRunMs: Number(values["max-run-ms"]),
  senders: Number(values.senders),
  users: Number(values.users),
  chain: values.chain !== "off",
  log: (line) => process.stdout.write(`${line}\n`),
});
const { problems, serverErrors, ...figures } = report;
process.stdout.write(`${JSON.stringify({ ...figures, problems: problems.length, seconds: Math.round((Date.now() - started) / 1000) })}\n`);
if (problems.length) for (const line of serverErrors) process.stdout.write(`SERVER ${line}\n`);
for (const problem of problems) process.stdout.write(`PROBLEM ${problem}\n`);
process.exit(problems.length ? 1 : 0);
