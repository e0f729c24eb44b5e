import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newTenant, startServer, type TestServer } from "./support/server.js";
import { patient } from "./support/patience.js";

// The typed client as an integrator uses it: examples/typed-client.ts run as its own process against
// a real server, and the drift check that keeps its generated types equal to the server's OpenAPI.

const run = promisify(execFile);
const tsx = join(process.cwd(), "node_modules/.bin/tsx");
const typesFile = join(process.cwd(), "examples/generated/api.d.ts");

describe("the typed client (openapi-fetch on the generated types)", { timeout: patient(90_000) }, () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server?.stop());

  it("runs its integration against a real server: user, NGN account, settled deposit, balances, a typed NOT_FOUND", async () => {
    const { apiKey } = await newTenant(server);
    const { stdout } = await run(tsx, ["examples/typed-client.ts"], {
      cwd: process.cwd(),
      env: { PATH: process.env.PATH, API_KEY: apiKey, BASE_URL: server.url },
      timeout: patient(60_000),
    });
    const userId = /^user +(\S+) /m.exec(stdout)?.[1];
    expect(userId, stdout).toBeDefined();
    expect(stdout).toMatch(/^deposit +\S+ 25000 NGN COMPLETED$/m);
    expect(stdout).toMatch(/^typed error +404 NOT_FOUND \(request \S+\)$/m);
    // The balances it printed are the server's.
    const res = await fetch(`${server.url}/v1/balances/${userId}`, { headers: { "x-api-key": apiKey } });
    const { balances } = (await res.json()) as { balances: { currency: string; posted: number; pending: number; available: number }[] };
    expect(balances.length).toBeGreaterThan(0);
    for (const row of balances) expect(stdout).toContain(`balance      ${row.currency} posted ${row.posted}, pending ${row.pending}, available ${row.available}`);
  });

  it("client:types --check passes on the committed types and fails on types that drifted from the OpenAPI", async () => {
    await expect(run(tsx, ["scripts/client-types.ts", "--check"], { cwd: process.cwd(), timeout: patient(60_000) })).resolves.toBeDefined();
    const drifted = join(mkdtempSync(join(tmpdir(), "client-types-")), "api.d.ts");
    writeFileSync(drifted, readFileSync(typesFile, "utf8").replace("requestId: string;", "requestId: string;\n            retryable: boolean;"));
    const failure = await run(tsx, ["scripts/client-types.ts", "--check", drifted], { cwd: process.cwd(), timeout: patient(60_000) }).then(
      () => expect.fail("the check accepted drifted types"),
      (err: { code: number; stderr: string }) => err,
    );
    expect(failure.code).toBe(1);
    expect(failure.stderr).toContain("is out of date: run `npm run client:types`");
  });
});
