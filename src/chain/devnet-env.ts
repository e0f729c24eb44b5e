import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * `npm run devnet` writes the settings of its local chain to DATA_DIR/devnet.env, and the server reads
 * them at start. Only test mode's chain settings (CHAIN_TEST_…) are taken from the file, so it can
 * never make a network live or touch real money; a variable set in the environment wins over the
 * file's line. Not read in production, whose settings come from the environment alone.
 */
export const DEVNET_ENV_FILE = "devnet.env";

const LINE = /^([A-Z][A-Z0-9_]*)=(.*)$/;

export type DevnetEnv = { file: string; values: Record<string, string>; issues: string[] };

/** The file's `NAME=value` lines (blank lines and `#` comments skipped), each refused line an issue. */
export function parseDevnetEnv(text: string, file: string): DevnetEnv {
  const values: Record<string, string> = {};
  const issues: string[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith("#")) return;
    const match = LINE.exec(line);
    if (!match) issues.push(`  ${file} line ${i + 1}: not a NAME=value line`);
    else if (!match[1].startsWith("CHAIN_TEST_")) issues.push(`  ${file} line ${i + 1}: ${match[1]}: only test chain settings (CHAIN_TEST_…) are read from this file; set it in the environment`);
    else values[match[1]] = match[2].trim();
  });
  return { file, values, issues };
}

/** DATA_DIR/devnet.env when it exists. */
export function readDevnetEnv(dataDir: string): DevnetEnv | undefined {
  const file = join(dataDir, DEVNET_ENV_FILE);
  return existsSync(file) ? parseDevnetEnv(readFileSync(file, "utf8"), file) : undefined;
}
