import { AppError } from "../errors.js";
import type { PrismaClient } from "../generated/prisma/client.js";
import type { AuthenticatedClient } from "../auth/service.js";
import type { Services } from "../services.js";

export type Context = {
  prisma: PrismaClient;
  services: Services;
  /** The authenticated caller; throws UNAUTHENTICATED. Resolved once per request, on first use. */
  client(): Promise<AuthenticatedClient>;
};

/** `authenticate` resolves the caller: from an HTTP request (shared with the HTTP edge) or from credentials. */
export function createContext(services: Services, prisma: PrismaClient, authenticate: () => Promise<AuthenticatedClient>): Context {
  let authenticated: Promise<AuthenticatedClient> | undefined;
  return {
    prisma,
    services,
    client() {
      authenticated ??= authenticate();
      return authenticated;
    },
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
