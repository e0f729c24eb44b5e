import { chmodSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import lockfile from "proper-lockfile";

/** Who holds the data directory, written beside the lock so that a refused process can name it. */
export type LockHolder = { pid: number; role: "server" | "tool"; command: string; hostname: string; startedAt: string };

/**
 * The lock is a directory made with mkdir (atomic), its mtime refreshed every UPDATE_MS. A holder
 * killed without cleaning up leaves it behind; it counts as stale once older than STALE_MS. An event
 * loop blocked longer than that loses the lock (see onLost).
 */
const STALE_MS = 10_000;
const UPDATE_MS = 2_000;
/** A tool (client:create) holds the directory for a few seconds: a process that finds one waits this long. */
const TOOL_WAIT_MS = 30_000;
const RETRY_MS = 500;

const lockPath = (dataDir: string) => join(dataDir, "embedded.lock");
const holderPath = (dataDir: string) => join(dataDir, "embedded.lock.holder.json");

export class DataDirBusyError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holder: LockHolder | undefined,
  ) {
    super(
      `The data directory ${dataDir} is in use by ` +
        (holder
          ? `pid ${holder.pid} on ${holder.hostname} (${holder.role}: ${holder.command}, started ${holder.startedAt})`
          : "another process (its holder file is missing)") +
        ". The embedded database allows one process at a time: stop that process first" +
        (holder?.role === "server" ? ", or use the tools that go through it (npm run client:create)." : "."),
    );
    this.name = "DataDirBusyError";
  }
}

export type DataDirLock = { release(): Promise<void> };

export function readLockHolder(dataDir: string): LockHolder | undefined {
  try {
    return JSON.parse(readFileSync(holderPath(dataDir), "utf8")) as LockHolder;
  } catch {
    return undefined;
  }
}

/** A holder on this machine whose process is gone: its lock only has to go stale. */
function holderIsGone(holder: LockHolder | undefined): boolean {
  if (!holder || holder.hostname !== hostname()) return false;
  try {
    process.kill(holder.pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ESRCH";
  }
}

function acquire(dataDir: string, waitMs: number, onLost: (err: Error) => void) {
  return lockfile.lock(dataDir, {
    lockfilePath: lockPath(dataDir),
    realpath: false,
    stale: STALE_MS,
    update: UPDATE_MS,
    retries: { retries: Math.ceil(waitMs / RETRY_MS), factor: 1, minTimeout: RETRY_MS, maxTimeout: RETRY_MS },
    onCompromised: onLost,
  });
}

/**
 * Holds `dataDir` for this process, or throws DataDirBusyError naming the process that does. It
 * waits for a tool to finish, and for the lock of a process that died on this machine to go stale.
 */
export async function lockDataDir(dataDir: string, role: LockHolder["role"], onLost: (err: Error) => void): Promise<DataDirLock> {
  let release: () => Promise<void>;
  try {
    release = await acquire(dataDir, 0, onLost);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ELOCKED") throw err;
    const holder = readLockHolder(dataDir);
    const waitMs = holderIsGone(holder) ? STALE_MS + 2_000 : holder?.role === "tool" ? TOOL_WAIT_MS : 0;
    if (!waitMs) throw new DataDirBusyError(dataDir, holder);
    try {
      release = await acquire(dataDir, waitMs, onLost);
    } catch (retryErr) {
      if ((retryErr as NodeJS.ErrnoException).code !== "ELOCKED") throw retryErr;
      throw new DataDirBusyError(dataDir, readLockHolder(dataDir));
    }
  }
  chmodSync(lockPath(dataDir), 0o700);
  const holder: LockHolder = {
    pid: process.pid,
    role,
    command: process.argv.slice(1).join(" "),
    hostname: hostname(),
    startedAt: new Date().toISOString(),
  };
  // Written whole, then renamed into place: a reader never sees half a file.
  const file = holderPath(dataDir);
  writeFileSync(`${file}.${process.pid}`, JSON.stringify(holder), { mode: 0o600 });
  renameSync(`${file}.${process.pid}`, file);
  return {
    async release() {
      rmSync(file, { force: true });
      await release();
    },
  };
}
