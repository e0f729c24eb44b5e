import { Writable } from "node:stream";
import { setImmediate as nextTurn } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { CredentialCache } from "../src/caller/credential-cache.js";
import type { AuthenticatedClient } from "../src/caller/authenticated-client.js";
import { createLogger } from "../src/logger.js";
import { createEvents } from "../src/pubsub/events.js";

const quiet = createLogger("silent", new Writable({ write: (_chunk, _encoding, done) => done() }));
const credential = { clientId: "c1", credentialId: "k1" } as AuthenticatedClient;

/** Verifications the test finishes by hand, counting how many the cache asked for. */
function lookups() {
  const pending: ((value: AuthenticatedClient) => void)[] = [];
  let asked = 0;
  return {
    verify: () => {
      asked++;
      return new Promise<AuthenticatedClient>((resolve) => pending.push(resolve));
    },
    get asked() {
      return asked;
    },
    finishAll: () => pending.splice(0).forEach((resolve) => resolve(credential)),
  };
}

const newCache = () => new CredentialCache({ events: createEvents(), logger: quiet, ttlMs: 1000 });

describe("credential cache", () => {
  it("makes one lookup for all the requests that arrive while it runs, and none while its answer is fresh", async () => {
    const cache = newCache();
    const lookup = lookups();
    const answers = Array.from({ length: 50 }, () => cache.remember("key", lookup.verify));
    expect(lookup.asked).toBe(1);
    lookup.finishAll();
    expect(await Promise.all(answers)).toEqual(Array(50).fill(credential));
    await cache.remember("key", lookup.verify);
    expect(lookup.asked).toBe(1);
    await cache.close();
  });

  it("lets no request that arrives after a revocation join a lookup begun before it, and keeps no answer of such a lookup", async () => {
    const cache = newCache();
    const lookup = lookups();
    const begunBefore = cache.remember("key", lookup.verify);
    cache.revoked("k1");
    await nextTurn(); // the revocation's own echo from the bus is heard too
    const arrivedAfter = cache.remember("key", lookup.verify);
    expect(lookup.asked).toBe(2);
    lookup.finishAll();
    await Promise.all([begunBefore, arrivedAfter]);
    await cache.remember("key", lookup.verify); // the lookup begun after the revocation was kept
    expect(lookup.asked).toBe(2);

    const unkept = lookups();
    const racing = cache.remember("other", unkept.verify);
    cache.revoked("k1");
    unkept.finishAll();
    await racing;
    const next = cache.remember("other", unkept.verify);
    expect(unkept.asked).toBe(2);
    unkept.finishAll();
    await next;
    await cache.close();
  });
});
