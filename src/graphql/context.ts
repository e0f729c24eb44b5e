import { AppError } from "../errors.js";
import type { PrismaClient } from "../generated/prisma/client.js";
import type { AuthenticatedClient } from "../auth/service.js";
import type { Credentials } from "../auth/credentials.js";
import type { Services } from "../services.js";

export type Context = {
  prisma: PrismaClient;
  services: Services;
  credentials: Credentials;
  /** The authenticated caller; throws UNAUTHENTICATED. Resolved once per request, on first use. */
  client(): Promise<AuthenticatedClient>;
};

export function createContext(services: Services, prisma: PrismaClient, credentials: Credentials): Context {
  let authenticated: Promise<AuthenticatedClient> | undefined;
  return {
    prisma,
    services,
    credentials,
    client() {
      authenticated ??= services.auth.authenticate(credentials);
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
