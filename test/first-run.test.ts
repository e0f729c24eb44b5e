import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startServerProcess, type ServerProcess } from "./support/server-process.js";
import { patient } from "./support/patience.js";

// `npm start` as a developer runs it: its own process on an embedded database in a fresh DATA_DIR.
let running: ServerProcess | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

const start = async (dataDir: string) => {
  running = await startServerProcess({ DATA_DIR: dataDir });
  return running;
};

const printedKeys = (server: ServerProcess) => new Set(server.output.join("\n").match(/fpk_test_[0-9a-f]+\.[\w-]+/g) ?? []);

/** The one key the start printed (in the key line and the curl line). */
function printedKey(server: ServerProcess): string {
  const keys = [...printedKeys(server)];
  expect(keys).toHaveLength(1);
  return keys[0]!;
}

// The test starts server processes that migrate a new embedded database (seconds each, more on a busy machine).
// The starts share one data directory: the second start is the one after the first.
describe("the first start on a new embedded database", { timeout: patient(120_000) }, () => {
  it("prints one API key with a curl line, and the key works at once; the next start prints no new key, and the first key still works", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "fintech-first-run-"));
    const server = await start(dataDir);
    const key = printedKey(server);
    expect(server.output.join("\n")).toContain(`curl -s ${server.url}/v1/api-keys -H 'x-api-key: ${key}'`);

    const res = await fetch(`${server.url}/v1/api-keys`, { headers: { "x-api-key": key } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([expect.objectContaining({ prefix: key.split(".")[0], revokedAt: null })]);

    await server.stop();
    const again = await start(dataDir);
    expect(printedKeys(again).size).toBe(0);
    expect((await fetch(`${again.url}/v1/api-keys`, { headers: { "x-api-key": key } })).status).toBe(200);
  });
});
