import { AppError } from "../errors.js";
import type { PrismaClient } from "../generated/prisma/client.js";
import type { AuthenticatedClient } from "../auth/service.js";
import type { RequestInfo } from "../pipeline/request-info.js";
import type { Services } from "../services.js";

export type Context = {
  prisma: PrismaClient;
  services: Services;
  requestInfo: RequestInfo;
  /** The authenticated caller; throws UNAUTHENTICATED. Resolved once per operation, by the pipeline's admission. */
  client(): Promise<AuthenticatedClient>;
};

/** Authentication is memoised per initial context: yoga extends that same object into the operation's context. */
const authentications = new WeakMap<object, Promise<AuthenticatedClient>>();

export function authenticationOf(scope: { requestInfo: RequestInfo }, services: Services): Promise<AuthenticatedClient> {
  let authenticated = authentications.get(scope);
  if (!authenticated) {
    authenticated = services.auth.authenticate(scope.requestInfo.credentials);
    authentications.set(scope, authenticated);
  }
  return authenticated;
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

/** Sandbox helpers exist in the schema everywhere but act only when SANDBOX is on. */
export function requireSandbox(ctx: Context): void {
  if (!ctx.services.config.sandbox) throw new AppError("FORBIDDEN", "Sandbox helpers are disabled (SANDBOX is off)");
}
