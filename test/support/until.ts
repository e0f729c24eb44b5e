import { setTimeout as sleep } from "node:timers/promises";
import { patient } from "./patience.js";

/** Polls `read` every `everyMs` until it returns something truthy (returned), or throws after `timeoutMs` (stretched by the load: patience.ts) naming `what`. */
export async function until<T>(read: () => Promise<T>, what: string, timeoutMs = 20_000, everyMs = 100): Promise<NonNullable<T>> {
  const deadline = Date.now() + patient(timeoutMs);
  for (;;) {
    const value = await read();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}
