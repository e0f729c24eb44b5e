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

describe("redaction", () => {
  const lineOf = async (fields: Record<string, unknown>) => {
    const screen = terminal();
    createLogger("info", screen.stream).info(fields, "line");
    await sleep(50);
    return JSON.parse(screen.lines()[0]);
  };
  const cases = [
    { name: "a chain line's token symbol is shown", fields: { network: "BASE", token: "USDC" }, shown: true },
    { name: "a token contract address is shown, nested too", fields: { send: { token: "0x5FbDB2315678afecb367f032d93F642f64180aa3" } }, shown: true },
    { name: "a session token (a JWT) is hidden", fields: { token: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl" }, shown: false },
    { name: "a key-like token is hidden", fields: { response: { token: "fpk_live_0123456789abcdef" } }, shown: false },
    { name: "a token that is not a string is hidden", fields: { token: { value: "USDC" } }, shown: false },
  ];
  it.each(cases)("$name", async ({ fields, shown }) => {
    const line = await lineOf(fields);
    const token = "token" in fields ? line.token : Object.values(line).find((v): v is { token: unknown } => typeof v === "object" && v !== null && "token" in v)!.token;
    const original = "token" in fields ? fields.token : (Object.values(fields)[0] as { token: unknown }).token;
    expect(token).toEqual(shown ? original : "[redacted]");
  });
});
