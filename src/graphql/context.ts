import { AppError } from "../errors.js";
import type { PrismaClient } from "../generated/prisma/client.js";
import type { AuthenticatedClient } from "../caller/authenticated-client.js";
import type { RequestInfo } from "../caller/request-info.js";

/**
 * Every domain service, as the composition root (src/services.ts) wires them. Declared empty here and
 * filled in there (declaration merging), so the schema kit, the pipeline and every domain folder can
 * name the services without importing the module that imports them all.
 */
export interface Services {}

export type Context = {
  prisma: PrismaClient;
  services: Services;
  requestInfo: RequestInfo;
  /** The authenticated caller; throws UNAUTHENTICATED. Resolved once per operation, by the pipeline's admission. */
  client(): Promise<AuthenticatedClient>;
};

/**
 * Authentication is memoised on the initial context, which yoga extends into the operation's context
 * (a property under a private symbol: a WeakMap entry per request cost measurably more).
 */
const AUTHENTICATION = Symbol("authentication");
type AuthenticationScope = { requestInfo: RequestInfo; [AUTHENTICATION]?: Promise<AuthenticatedClient> };

export function authenticationOf(scope: AuthenticationScope, services: Services): Promise<AuthenticatedClient> {
  scope[AUTHENTICATION] ??= services.auth.authenticate(scope.requestInfo.credentials, scope.requestInfo.ip);
  return scope[AUTHENTICATION];
}

export function createContext(scope: { requestInfo: RequestInfo }, services: Services, prisma: PrismaClient): Context {
  return {
    prisma,
    services,
    requestInfo: scope.requestInfo,
    client: () => authenticationOf(scope, services),
  };
}

/** The calling client's id, for tenant scoping. */
export async function clientIdOf(ctx: Context): Promise<string> {
  return (await ctx.client()).clientId;
}

/**
 * Sandbox helpers and simulations exist in the schema everywhere but act only in test mode (SPEC §15):
 * a live credential is refused with TEST_MODE_ONLY (with SANDBOX off no test credential gets this far).
 */
export async function requireTestMode(ctx: Context): Promise<void> {
  const { mode } = await ctx.client();
  if (mode !== "test") throw new AppError("TEST_MODE_ONLY", "Sandbox helpers and simulations work in test mode only: use a test API key (or a session with x-mode: test)");
}
