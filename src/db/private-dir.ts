import { chmodSync, lstatSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";

const GROUP_AND_OTHERS = 0o077;

/** What the product keeps directly in DATA_DIR (generated secrets, the lock and its holder, the admin socket). */
const OWN_ENTRY = /(\.secret|\.enc|^embedded\.lock.*|^admin\.sock)$/;

/** Creates `dir` (and missing parents) readable by this OS user only. */
export function makePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
}

/** Takes group and other permissions off one entry; symbolic links are left alone. Returns whether it had any. */
function tighten(path: string, recursive: boolean): number {
  const stat = lstatSync(path, { throwIfNoEntry: false });
  if (!stat || stat.isSymbolicLink()) return 0;
  let loosened = 0;
  if (recursive && stat.isDirectory()) for (const name of readdirSync(path)) loosened += tighten(join(path, name), true);
  const mode = stat.mode & 0o777;
  if (mode & GROUP_AND_OTHERS) {
    chmodSync(path, mode & ~GROUP_AND_OTHERS);
    loosened++;
  }
  return loosened;
}

/**
 * Makes the data directory private: DATA_DIR itself, everything in the database directory, and the
 * product's own files beside it end with no group or other permission (directories 0700, files 0600).
 * Other things someone put in DATA_DIR are not touched (DATA_DIR could be a home directory).
 * PGlite creates its files 0666 whatever the umask, so this runs after it opens and when it closes;
 * in between, the 0700 directories keep them private. Returns how many entries were loosened.
 */
export function tightenDataDir(dataDir: string, databaseDir: string): number {
  const own = readdirSync(dataDir).filter((name) => OWN_ENTRY.test(name));
  return tighten(dataDir, false) + tighten(databaseDir, true) + own.reduce((sum, name) => sum + tighten(join(dataDir, name), true), 0);
}
