import { execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { patient } from "./support/patience.js";
import { runnableSamples } from "./support/readme-samples.js";
import { startServerProcess, type ServerProcess } from "./support/server-process.js";
import { until } from "./support/until.js";

// The README's samples as a reader pastes them, in order, against `npm start`'s server on a new
// embedded database: the shell samples in bash with API_KEY and BASE_URL exported as the quick start
// says, the graphql-ws sample with tsx. Which samples run and which are skipped, and why:
// test/support/readme-samples.ts.

const run = promisify(execFile);
const shellSamples = runnableSamples("sh");
/** A sample that streams until interrupted (SSE): run beside the others, stopped once it showed an update. */
const streams = (code: string) => /\bcurl -N\b/.test(code);

describe("the README's samples run as pasted", { timeout: patient(180_000) }, () => {
  const dataDir = join(mkdtempSync(join(tmpdir(), "fintech-readme-")), "data");
  let server: ServerProcess;
  let env: Record<string, string>;
  /** What the shell samples left in USER_ID, for the samples after them. */
  let userId = "";

  beforeAll(async () => {
    // The README's sandbox: deposits settle after the default second.
    server = await startServerProcess({ DATA_DIR: dataDir, SANDBOX_SETTLE_MS: "1000" });
    const apiKey = /Test-mode API key \(shown once\): (\S+)/.exec(server.output.join("\n"))?.[1];
    if (!apiKey) throw new Error(`the first start printed no key:\n${server.output.join("\n")}`);
    env = { PATH: process.env.PATH!, HOME: process.env.HOME ?? tmpdir(), API_KEY: apiKey, BASE_URL: server.url, DATA_DIR: dataDir };
  }, patient(120_000));
  afterAll(async () => {
    await server?.stop();
    rmSync(join(dataDir, ".."), { recursive: true, force: true });
  });

  it("finds the samples it must run: npm run example, client:create, REST, GraphQL, SSE and the graphql-ws client", () => {
    const all = shellSamples.map((sample) => sample.code).join("\n");
    for (const command of ["npm run example", "npm run client:create", "/v1/user", "/graphql", "curl -N"]) expect(all).toContain(command);
    expect(runnableSamples("ts")).toHaveLength(1);
  });

  it("the shell samples, one after the other in one bash, exit 0 with the answers they show", async () => {
    const script = shellSamples
      .filter((sample) => !streams(sample.code))
      .map((sample) => `echo '### README.md:${sample.line}'\n${sample.code}`)
      .join("\n");
    const { stdout } = await run("bash", ["-e", "-o", "pipefail", "-c", `${script}\necho "### USER_ID=$USER_ID"`], { cwd: process.cwd(), env });
    const output = (line: number) => stdout.split("### README.md:").find((part) => part.startsWith(`${line}\n`)) ?? "";
    const [example, clientCreate, restCalls, graphql] = shellSamples.filter((sample) => !streams(sample.code)).map((sample) => output(sample.line));
    userId = /### USER_ID=(\S+)/.exec(stdout)?.[1] ?? "";
    expect(userId).toMatch(/^[0-9a-f-]{36}$/);

    expect(example).toMatch(/update\s+\S+ COMPLETED \(over graphql-ws\)/);
    expect(clientCreate).toMatch(/^api key fpk_test_\S+ \(test mode\)$/m);
    expect(restCalls).toContain('"accountNumber"');
    expect(restCalls).toContain('"status":"PENDING"');
    expect(restCalls).not.toContain('"error"');
    expect(graphql).toContain('"email":"ada@example.com"');
    expect(graphql).not.toContain('"errors"');
  });

  it("the SSE sample streams the user's deposit updates", async () => {
    expect(userId, "the shell samples' USER_ID").not.toBe("");
    const [sample] = shellSamples.filter((candidate) => streams(candidate.code));
    const child = spawn("bash", ["-c", sample!.code], { cwd: process.cwd(), env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    try {
      // The stream shows only what happens after it connected: a deposit a second until one shows.
      await until(async () => {
        if (/"depositUpdated":\{"id":"[^"]+","status":"PENDING"/.test(output)) return true;
        await fetch(`${env.BASE_URL}/v1/sandbox/deposits`, {
          method: "POST",
          headers: { "x-api-key": env.API_KEY!, "content-type": "application/json" },
          body: JSON.stringify({ userId, currency: "NGN", amount: 100 }),
        });
        return false;
      }, "a deposit update on the SSE stream", 60_000, 1000);
      expect(output).toMatch(/^id: \S+$/m);
    } finally {
      process.kill(-child.pid!, "SIGTERM");
    }
  });

  it("the graphql-ws sample prints its deposit PENDING then COMPLETED, and ends", async () => {
    expect(userId, "the shell samples' USER_ID").not.toBe("");
    const [sample] = runnableSamples("ts");
    // In the repository, where graphql-ws and ws resolve, as the README says.
    const file = join(process.cwd(), `.readme-sample-${process.pid}.ts`);
    writeFileSync(file, sample!.code);
    try {
      const { stdout } = await run(join(process.cwd(), "node_modules/.bin/tsx"), [file], { cwd: process.cwd(), env: { ...env, USER_ID: userId } });
      // (The SSE test's last deposits may still complete after its cursor: they are printed too.)
      const statuses = stdout.match(/status: '\w+'/g) ?? [];
      expect(statuses).toContain("status: 'PENDING'");
      expect(statuses.at(-1)).toBe("status: 'COMPLETED'");
    } finally {
      rmSync(file, { force: true });
    }
  });
});
