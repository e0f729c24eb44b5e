import { Writable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { createLogger, prettyOutput } from "../src/logger.js";

/** What a terminal would show, without its colours. */
function terminal() {
  let text = "";
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      done();
    },
  });
  return { stream, lines: () => text.replace(/\x1b\[[0-9;]*m/g, "").split("\n").filter(Boolean) };
}

describe("pretty logs on a terminal", () => {
  it("show a request as one line: method, path, status and time, then its ids, credentials still redacted", async () => {
    const screen = terminal();
    const logger = createLogger("info", prettyOutput(screen.stream));
    const access = { requestId: "req-1", req: { method: "POST", path: "/v1/user" }, res: { status: 201 }, route: "/v1/user", clientId: "client-1", durationMs: 12 };
    logger.info(access, "request completed");
    logger.warn({ apiKey: "fpk_secret", provider: "sandbox-ngn" }, "provider failed");
    await sleep(50);
    expect(screen.lines()).toHaveLength(2);
    const [request, warning] = screen.lines();
    expect(request).toMatch(/INFO: POST \/v1\/user 201 12 ms \{"requestId":"req-1","clientId":"client-1"\}$/);
    expect(warning).toMatch(/WARN: provider failed \{"apiKey":"\[redacted\]","provider":"sandbox-ngn"\}$/);
  });
});
