import { execFile, spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TRIGGERS } from "../scripts/sandbox-triggers.js";
import { startTcpProxy } from "./support/tcp-proxy.js";
import { startReceiver, type Receiver } from "./support/webhook-receiver.js";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";
import { patient } from "./support/patience.js";

// `npm run listen` and `npm run trigger` as a developer runs them: each its own process (tsx), against
// a real server, forwarding to a real node:http receiver on 127.0.0.1 that verifies every request
// with the standardwebhooks package and the secret listen printed.

const run = promisify(execFile);
const tsx = join(process.cwd(), "node_modules/.bin/tsx");
const SECRET_LINE = /^webhook signing secret (whsec_\S+)$/;

type Listener = { child: ChildProcess; lines: string[]; exited: Promise<number | null>; waitForLine(match: RegExp, timeoutMs?: number): Promise<string> };

function startListen(env: Record<string, string>, args: string[]): Listener {
  const child = spawn(tsx, ["scripts/listen.ts", ...args], { cwd: process.cwd(), env: { PATH: process.env.PATH, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  const lines: string[] = [];
  createInterface({ input: child.stdout! }).on("line", (line) => lines.push(line));
  createInterface({ input: child.stderr! }).on("line", (line) => lines.push(`stderr: ${line}`));
  // "close": every line of its output has been read too.
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  return {
    child,
    lines,
    exited,
    async waitForLine(match, timeoutMs = 30_000) {
      const deadline = Date.now() + patient(timeoutMs);
      for (;;) {
        const line = lines.find((candidate) => match.test(candidate));
        if (line) return line;
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`listen printed no line matching ${match}:\n${lines.join("\n")}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  };
}

const trigger = (tenant: Tenant, server: TestServer, type: string) =>
  run(tsx, ["scripts/trigger.ts", type], { cwd: process.cwd(), env: { PATH: process.env.PATH, API_KEY: tenant.apiKey, BASE_URL: server.url }, timeout: patient(60_000) });

describe("npm run listen and npm run trigger", { timeout: patient(120_000) }, () => {
  let server: TestServer;
  let receiver: Receiver;
  /** The secret listen printed: the receiver verifies with it, as a developer's would. */
  let secret = "";
  const verified = (request: { headers: Record<string, string | string[] | undefined>; body: string }) => {
    try {
      return new Webhook(secret).verify(request.body, request.headers as Record<string, string>) as { id: string; type: string };
    } catch {
      return undefined;
    }
  };

  beforeAll(async () => {
    server = await startServer();
    // Signed right: 204, except deposit.created, answered 500 (its line must show it). Signed wrong: 400.
    receiver = await startReceiver((_n, request) => {
      const event = verified(request);
      return !event ? 400 : event.type === "deposit.created" ? 500 : 204;
    });
  });
  afterAll(async () => {
    await receiver?.close();
    await server?.stop();
  });

  it("forwards each event signed with the printed secret, prints the receiver's status per event, and stops on SIGINT", async () => {
    const tenant = await newTenant(server);
    const listen = startListen({ API_KEY: tenant.apiKey, BASE_URL: server.url }, ["--forward", receiver.url]);
    try {
      secret = SECRET_LINE.exec(await listen.waitForLine(SECRET_LINE))![1];

      const { stdout } = await trigger(tenant, server, "deposit.completed");
      const depositId = /^triggered deposit\.completed: deposit (\S+)$/m.exec(stdout)?.[1];
      expect(depositId, stdout).toBeDefined();
      const completedLine = await listen.waitForLine(/ deposit\.completed /);
      const createdLine = await listen.waitForLine(/ deposit\.created /);

      // The receiver got the deposit's events, each verified with the printed secret, as the server's feed has them.
      const completed = receiver.received.find((request) => verified(request)?.type === "deposit.completed");
      expect(completed, JSON.stringify(receiver.received.map((request) => request.body))).toBeDefined();
      const eventId = completed!.headers["webhook-id"] as string;
      expect(JSON.parse(completed!.body)).toMatchObject({ id: eventId, type: "deposit.completed", data: { object: { id: depositId, status: "COMPLETED" } } });
      const { id, type, createdAt, livemode, data } = (await (await fetch(`${server.url}/v1/events/${eventId}`, { headers: tenant.headers })).json()) as Record<string, unknown>;
      expect(completed!.body).toBe(JSON.stringify({ id, type, createdAt, livemode, data }));
      expect(receiver.received.every((request) => verified(request))).toBe(true);

      // One line per event, with what the receiver answered.
      expect(completedLine).toMatch(new RegExp(`deposit\\.completed +${eventId}  → 204$`));
      expect(createdLine).toMatch(/deposit\.created +evt_\S+  → 500$/);

      listen.child.kill("SIGINT");
      expect(await listen.exited).toBe(0);
      expect(listen.lines.at(-1)).toBe("stopped");
      // Stopped after the event in hand: one line for each event the receiver got, once each.
      const forwarded = listen.lines.filter((line) => / → /.test(line)).map((line) => /(evt_\S+)  → /.exec(line)?.[1]);
      expect(forwarded).toEqual(receiver.received.map((request) => request.headers["webhook-id"]));
    } finally {
      listen.child.kill("SIGKILL");
    }
  });

  it("reads on from its cursor when the server comes back: an event written while it was unreachable is forwarded", async () => {
    const tenant = await newTenant(server);
    const proxy = await startTcpProxy({ host: "127.0.0.1", port: Number(new URL(server.url).port) });
    const listen = startListen({ API_KEY: tenant.apiKey, BASE_URL: `http://127.0.0.1:${proxy.port}` }, ["--forward", receiver.url]);
    try {
      secret = SECRET_LINE.exec(await listen.waitForLine(SECRET_LINE))![1];
      await proxy.cut();
      await listen.waitForLine(/^stderr: listen: .* did not answer .*; retrying$/);
      const { stdout } = await trigger(tenant, server, "user.created");
      const userId = /^triggered user\.created: user (\S+)$/m.exec(stdout)![1];
      await proxy.restore();
      await listen.waitForLine(/ user\.created +evt_\S+  → 204$/);
      expect(receiver.received.some((request) => verified(request)?.type === "user.created" && request.body.includes(userId))).toBe(true);
    } finally {
      listen.child.kill("SIGKILL");
      await proxy.close();
    }
  });

  it.each([
    ["without --forward", (_key: string) => ({ args: [] as string[], key: _key }), 2, "--forward is required"],
    ["with a key the server refuses", (key: string) => ({ args: ["--forward", "http://127.0.0.1:9/hooks"], key: `${key}x` }), 1, "answered 401"],
  ])("listen stops at once %s, saying why", async (_case, setup, code, message) => {
    const tenant = await newTenant(server);
    const { args, key } = setup(tenant.apiKey);
    const listen = startListen({ API_KEY: key, BASE_URL: server.url }, args);
    expect(await listen.exited).toBe(code);
    expect(listen.lines.join("\n")).toContain(message);
  });

  it.each(Object.keys(TRIGGERS))("trigger %s: the event is in the client's feed", async (type) => {
    const tenant = await newTenant(server);
    const { stdout } = await trigger(tenant, server, type);
    expect(stdout).toMatch(new RegExp(`^triggered ${type.replaceAll(".", "\\.")}: `, "m"));
    const feed = (await (await fetch(`${server.url}/v1/events?type=${type}`, { headers: tenant.headers })).json()) as { data: { type: string }[] };
    expect(feed.data.map((event) => event.type)).toContain(type);
  });

  it.each([
    ["a type the API does not have", "deposit.done"],
    ["a type the sandbox cannot produce", "api_key.rolled"],
  ])("trigger refuses %s, listing the types it can produce", async (_case, type) => {
    const tenant = await newTenant(server);
    const failure = await trigger(tenant, server, type).then(
      () => expect.fail(`trigger accepted ${type}`),
      (err: { code: number; stderr: string }) => err,
    );
    expect(failure.code).toBe(2);
    expect(failure.stderr).toContain(`the sandbox cannot produce "${type}"`);
    expect(failure.stderr).toContain("  deposit.completed\n");
  });

  it("the documented list of types trigger can produce is the list it has", () => {
    const docs = readFileSync(join(process.cwd(), "docs/events-and-webhooks.md"), "utf8");
    const sentence = /It can produce ([^]*?)\(`scripts\/sandbox-triggers\.ts`\)/.exec(docs)?.[1] ?? "";
    expect([...sentence.matchAll(/`([a-z_.]+)`/g)].map((match) => match[1])).toEqual(Object.keys(TRIGGERS));
  });
});
