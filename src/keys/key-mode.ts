import type { PrismaClient } from "../generated/prisma/client.js";
import type { AuthenticatedClient } from "../caller/authenticated-client.js";
import { tenantOf } from "../clients/service.js";
import type { Mode } from "../modes.js";
import { AppError } from "../errors.js";

/** A key's mode, shown by its prefix: `fpk_live_…` is live; `fpk_test_…` and the keys made before modes (`fpk_` and 12 hex digits) are test. */
export const modeOfKey = (prefix: string): Mode => (prefix.startsWith("fpk_live_") ? "live" : "test");

/**
 * The tenant a new key is created in (SPEC §15): the caller's own, unless it asks for the other mode.
 * A session acts for the whole business, so it may: the key goes to the business's tenant of that
 * mode. An API key acts in its own mode only, and asking for the other one is FORBIDDEN.
 */
export async function tenantForNewKey(prisma: Pick<PrismaClient, "client">, caller: AuthenticatedClient, mode: Mode | null | undefined): Promise<string> {
  if (!mode || mode === caller.mode) return caller.clientId;
  if (caller.method !== "JWT") {
    throw new AppError("FORBIDDEN", `A ${caller.mode} API key can only create ${caller.mode} keys: create a ${mode} key with a session (or a ${mode} key)`, { param: "mode" });
  }
  const business = await prisma.client.findUniqueOrThrow({ where: { id: caller.clientId } });
  return (await tenantOf(prisma, business, mode)).id;
}
