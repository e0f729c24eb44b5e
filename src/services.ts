import type { PrismaClient } from "./generated/prisma/client.js";
import type { Config } from "./config.js";
import type { Logger } from "./logger.js";
import type { Providers } from "./providers/index.js";
import type { Mailer } from "./providers/mailer.js";
import { AuthService } from "./auth/service.js";
import { ApiKeyService } from "./keys/service.js";
import { UserService } from "./users/service.js";

export type ServiceDeps = {
  prisma: PrismaClient;
  config: Config;
  logger: Logger;
  mailer: Mailer;
  providers: Providers;
};

/** The composition root: every domain service, wired once per process. */
export function createServices(deps: ServiceDeps) {
  const keys = new ApiKeyService(deps.prisma);
  return {
    config: deps.config,
    keys,
    auth: new AuthService({ prisma: deps.prisma, keys, mailer: deps.mailer, logger: deps.logger, secret: deps.config.jwtSecret }),
    users: new UserService(deps.prisma),
  };
}

export type Services = ReturnType<typeof createServices>;
