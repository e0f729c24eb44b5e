import { execFile } from "node:child_process";
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { startServerProcess, SHARED_SECRETS, type ServerProcess } from "./support/server-process.js";
import { patient } from "./support/patience.js";

// These tests are about the embedded database: every process gets an explicit environment without
// DATABASE_URL, so they run on PGlite under a temporary DATA_DIR whatever TEST_DATABASE_URL says.
// Each test starts several processes (a few seconds each, more on a busy machine): hence the long
// timeouts, and the checks that can share a process run share it.

const run = promisify(execFile);
const temporaryDirs: string[] = [];
afterAll(() => temporaryDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function newDataDir(): string {
  const parent = mkdtempSync(join(tmpdir(), "fintech-embedded-"));
  temporaryDirs.push(parent);
  return join(parent, "data");
}

/** `npm run client:create` as its own process; resolves to the API key it printed. */
async function createClient(dataDir: string): Promise<string> {
  const { stdout } = await run(
    join(process.cwd(), "node_modules/.bin/tsx"),
    ["scripts/create-client.ts", "--email", `ops-${crypto.randomUUID()}@example.com`, "--name", "Ops"],
    { cwd: process.cwd(), env: { PATH: process.env.PATH, NODE_ENV: "test", DATA_DIR: dataDir, ...SHARED_SECRETS }, timeout: patient(60_000) },
  );
  const key = /^api key (\S+)/m.exec(stdout)?.[1];
  if (!key) throw new Error(`client:create printed no key:\n${stdout}`);
  return key;
}

const serverOn = (dataDir: string) => startServerProcess({ DATA_DIR: dataDir });

/** The process that holds the data directory, as it describes itself beside the lock. */
const holderOf = (dataDir: string) => JSON.parse(readFileSync(join(dataDir, "embedded.lock.holder.json"), "utf8"));

async function keyWorks(server: ServerProcess, apiKey: string): Promise<boolean> {
  const res = await fetch(`${server.url}/v1/api-keys`, { headers: { "x-api-key": apiKey } });
  return res.status === 200;
}

/** Every entry under `dir` with its permission bits, as "mode type path" lines. */
function modesUnder(dir: string): string[] {
  const lines: string[] = [];
  const visit = (path: string) => {
    const stat = lstatSync(path);
    lines.push(`${(stat.mode & 0o777).toString(8)} ${stat.isDirectory() ? "d" : "f"} ${path}`);
    if (stat.isDirectory()) readdirSync(path).forEach((name) => visit(join(path, name)));
  };
  visit(dir);
  return lines;
}

function expectPrivate(dir: string) {
  const loose = modesUnder(dir).filter((line) => !line.startsWith("700 d") && !line.startsWith("600 f"));
  expect(loose).toEqual([]);
}

describe("embedded database: one process holds the data directory, kept private", { timeout: patient(120_000) }, () => {
  it("client:create goes through the running server (its key works at once and after a restart); a second server is refused, naming the holder; DATA_DIR and everything in it stay 0700 (directories) / 0600 (files), while running and after", async () => {
    const dataDir = newDataDir();
    let server = await serverOn(dataDir);
    try {
      expect(modesUnder(dataDir).length).toBeGreaterThan(100);
      expectPrivate(dataDir);

      const failure = await serverOn(dataDir).then(
        (second) => second.stop().then(() => "a second server started"),
        (err: Error) => err.message,
      );
      expect(failure).toContain(`in use by pid ${holderOf(dataDir).pid}`);
      expect(failure).toMatch(/\(server: .*src\/main\.ts, started \d{4}-\d\d-\d\dT/);
      expect(await fetch(`${server.url}/readyz`).then((res) => res.status)).toBe(200);

      const apiKey = await createClient(dataDir);
      expect(await keyWorks(server, apiKey)).toBe(true);
      await server.stop();
      expectPrivate(dataDir);
      server = await serverOn(dataDir);
      expect(await keyWorks(server, apiKey)).toBe(true);
    } finally {
      await server.stop();
    }
  });

  it("client:create opens the database itself when no server runs, tightening a data directory left open to others, and the server then accepts the key", async () => {
    const dataDir = newDataDir();
    mkdirSync(dataDir, { mode: 0o755 });
    chmodSync(dataDir, 0o755);
    writeFileSync(join(dataDir, "jwt.secret"), SHARED_SECRETS.JWT_SECRET, { mode: 0o644 });
    chmodSync(join(dataDir, "jwt.secret"), 0o644);
    const apiKey = await createClient(dataDir);
    expectPrivate(dataDir);
    const server = await serverOn(dataDir);
    try {
      expect(await keyWorks(server, apiKey)).toBe(true);
    } finally {
      await server.stop();
    }
  });

  it("takes over the lock of a server that was killed, once it is stale", async () => {
    const dataDir = newDataDir();
    const killed = await serverOn(dataDir);
    const firstKey = await createClient(dataDir);
    const killedPid = holderOf(dataDir).pid;
    process.kill(killedPid, "SIGKILL");
    await killed.stop();
    // The tool finds the dead server's lock, waits for it to go stale (10 s) and opens the database itself.
    const secondKey = await createClient(dataDir);
    const server = await serverOn(dataDir);
    try {
      expect(await keyWorks(server, firstKey)).toBe(true);
      expect(await keyWorks(server, secondKey)).toBe(true);
      expect(holderOf(dataDir)).toMatchObject({ role: "server" });
      expect(holderOf(dataDir).pid).not.toBe(killedPid);
    } finally {
      await server.stop();
    }
  });
});
