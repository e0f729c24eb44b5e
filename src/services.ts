import type { PrismaClient } from "./generated/prisma/client.js";
import type { Config } from "./config.js";
import type { Logger } from "./logger.js";
import type { Providers } from "./providers/index.js";
import type { Events } from "./pubsub/events.js";
import type { Mailer } from "./providers/mailer.js";
import { AuthService } from "./auth/service.js";
import { ApiKeyService } from "./keys/service.js";
import { LedgerService } from "./ledger/service.js";
import { UserService } from "./users/service.js";
import { VirtualAccountService } from "./accounts/virtual-account-service.js";
import { interimEnsureWallet } from "./accounts/interim-ensure-wallet.js";

export type ServiceDeps = {
  prisma: PrismaClient;
  config: Config;
  logger: Logger;
  mailer: Mailer;
  providers: Providers;
  /** Cross-instance events (deposit updates). */
  events: Events;
};

/** The composition root: every domain service, wired once per process. */
export function createServices(deps: ServiceDeps) {
  const keys = new ApiKeyService(deps.prisma);
  const users = new UserService(deps.prisma);
  return {
    config: deps.config,
    keys,
    auth: new AuthService({ prisma: deps.prisma, keys, mailer: deps.mailer, logger: deps.logger, secret: deps.config.jwtSecret }),
    users,
    ledger: new LedgerService(deps.prisma),
    virtualAccounts: new VirtualAccountService({
      prisma: deps.prisma,
      users,
      banks: [deps.providers.ngnBank, deps.providers.fiatBank],
      ensureWallet: interimEnsureWallet(deps.prisma, deps.providers.custodian),
      logger: deps.logger,
    }),
  };
}

export type Services = ReturnType<typeof createServices>;
