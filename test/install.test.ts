import { execFile } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import semver from "semver";
import { describe, expect, it } from "vitest";

const read = (file: string) => readFileSync(new URL(`../${file}`, import.meta.url), "utf8");

describe("installing", () => {
  it("installs nothing whose engines refuse the oldest Node the project and the README name", () => {
    const pkg = JSON.parse(read("package.json")) as { engines: { node: string } };
    const oldest = semver.minVersion(pkg.engines.node)!.version;
    expect(read("README.md")).toContain(`Node ${oldest.replace(/\.0$/, "")} or newer`);
    expect(semver.satisfies(process.version, pkg.engines.node)).toBe(true);
    const lock = JSON.parse(read("package-lock.json")) as { packages: Record<string, { version?: string; engines?: unknown }> };
    const refusing = Object.entries(lock.packages)
      .filter(([, entry]) => typeof entry.engines === "object" && entry.engines !== null && "node" in entry.engines)
      .filter(([, entry]) => !semver.satisfies(oldest, (entry.engines as { node: string }).node))
      .map(([path, entry]) => `${path}@${entry.version} wants Node ${(entry.engines as { node: string }).node}`);
    expect(refusing).toEqual([]);
  });

  it("sends nothing anywhere: the install script of @scarf/scarf (pulled in by swagger-ui-dist) finds itself turned off", { timeout: 30_000 }, async () => {
    const scarf = join(process.cwd(), "node_modules/@scarf/scarf");
    // The script first asks `npm ls` where it sits in the tree, and gives up after 3 s (a loaded
    // machine takes longer): the test asks npm itself, and hands that answer over at once.
    const { stdout: tree } = await promisify(execFile)("npm", ["ls", "@scarf/scarf", "--json", "--long"], { cwd: process.cwd(), timeout: 25_000 });
    const shims = mkdtempSync(join(tmpdir(), "npm-ls-"));
    writeFileSync(join(shims, "tree.json"), tree);
    writeFileSync(join(shims, "npm"), `#!/bin/sh\nexec cat "${join(shims, "tree.json")}"\n`);
    chmodSync(join(shims, "npm"), 0o755);
    // As npm runs its postinstall: in the package's folder, INIT_CWD naming the project.
    const run = await new Promise<{ stdout: string; stderr: string }>((resolve) =>
      execFile(process.execPath, ["--require", join(process.cwd(), "test/support/no-network.cjs"), "report.js"], {
        cwd: scarf,
        env: { ...process.env, PATH: `${shims}:${process.env.PATH}`, INIT_CWD: process.cwd(), SCARF_VERBOSE: "true", npm_execpath: "npm" },
        timeout: 25_000,
      }, (_err, stdout, stderr) => resolve({ stdout, stderr })),
    );
    expect(run.stdout + run.stderr).toContain("Scarf has been disabled via a package.json");
    expect(run.stderr).not.toContain("NETWORK REFUSED");
  });
});
