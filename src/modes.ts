import type { Sql } from "./db/sql.js";

/**
 * Test mode and live mode (SPEC §15). A business is two tenants, one per mode: every credential acts
 * in one of them, so a mode is isolated exactly as a tenant is. Test mode plays money (sandbox
 * providers, simulated or test chains); live mode moves real money only.
 */
export const MODES = ["test", "live"] as const;
export type Mode = (typeof MODES)[number];

export const isMode = (value: unknown): value is Mode => value === "test" || value === "live";

/** The header a session (OTP JWT) names its request's mode with; API keys carry their own. */
export const MODE_HEADER = "x-mode";

/** The mode of a new key, or of a session's request that names none: live in production, test elsewhere. */
export const defaultMode = (production: boolean): Mode => (production ? "live" : "test");

const MODE_OF_TENANT = `SELECT "mode" FROM "clients" WHERE "id" = $1::uuid`;

/** Tenant id → its mode. A tenant never changes mode, so what was read once holds for the process. */
const known = new Map<string, Mode>();

export function rememberMode(clientId: string, mode: Mode): void {
  known.set(clientId, mode);
}

/** Plain SQL, or a Prisma client or transaction. */
type Reader = Sql | { $queryRawUnsafe<T>(query: string, ...values: unknown[]): Promise<T> };

/** The mode of a tenant (a `clientId` on any row). */
export async function modeOf(db: Reader, clientId: string): Promise<Mode> {
  const cached = known.get(clientId);
  if (cached) return cached;
  const [row] = "query" in db ? await db.query<{ mode: string }>("tenant_mode", MODE_OF_TENANT, [clientId]) : await db.$queryRawUnsafe<{ mode: string }[]>(MODE_OF_TENANT, clientId);
  if (!row || !isMode(row.mode)) throw new Error(`tenant ${clientId} has no mode`);
  known.set(clientId, row.mode);
  return row.mode;
}

export const isLive = (mode: Mode) => mode === "live";
