// `stripe trigger` for this API: makes the sandbox produce an event, through the public API alone
// (scripts/sandbox-triggers.ts says how for each type), so a `npm run listen` running beside it
// forwards the event (with the events of the steps before it).
//
//   API_KEY=fpk_… npm run trigger -- deposit.completed
//
// The server must run with the sandbox on (SANDBOX, on outside production).
import { apiKey, ApiError, rest } from "./sandbox-api.js";
import { isTriggerable, TRIGGERS, type Call } from "./sandbox-triggers.js";

async function main() {
  const type = process.argv[2] ?? "";
  if (!isTriggerable(type)) {
    process.stderr.write(
      `trigger: ${type ? `the sandbox cannot produce ${JSON.stringify(type)}` : "name an event type"}. It can produce:\n` +
        Object.keys(TRIGGERS).map((known) => `  ${known}\n`).join("") +
        "usage: npm run trigger -- <event type>\n",
    );
    process.exit(2);
  }
  const key = apiKey("trigger");
  const call: Call = (method, path, body) => rest(key, method, path, { body });
  process.stdout.write(`triggered ${type}: ${await TRIGGERS[type](call)}\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    const hint = err instanceof ApiError && (err.status === 403 || err.status === 404) && err.message.includes("/v1/sandbox/") ? " (is the sandbox on? SANDBOX is off in production)" : "";
    process.stderr.write(`trigger failed: ${err instanceof Error ? err.message : String(err)}${hint}\n`);
    process.exit(1);
  },
);
