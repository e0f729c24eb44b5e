import type { PrismaClient } from "./generated/prisma/client.js";
import type { SqlDatabase } from "./db/sql.js";
import type { Config } from "./config.js";
import type { Logger } from "./logger.js";
import type { Providers } from "./providers/index.js";
import type { Events } from "./pubsub/events.js";
import type { Mailer } from "./providers/mailer.js";
import type { BusinessMetrics } from "./metrics/metrics.js";
import { AuthService } from "./auth/service.js";
import { defaultMode } from "./modes.js";
import { CredentialCache } from "./caller/credential-cache.js";
import { CredentialWatch } from "./auth/credential-watch.js";
import { ApiKeyService } from "./keys/service.js";
import { LedgerService } from "./ledger/service.js";
import { UserService } from "./users/service.js";
import { VirtualAccountService } from "./accounts/virtual-account-service.js";
import { WalletService } from "./wallets/service.js";
import { CardService } from "./cards/service.js";
import { CardTransactionService } from "./cards/transactions.js";
import { UsdcAccountService } from "./accounts/usdc-service.js";
import { ConversionService } from "./conversion/service.js";
import { CardSpendingService } from "./cards/spending.js";
import { CardAuthorizationService } from "./cards/authorizations.js";
import { CardAuthorizationExpiry } from "./cards/authorization-expiry.js";
import { BalanceLookupService } from "./accounts/balance-lookup-service.js";
import { DepositService } from "./deposits/service.js";
import { WithdrawalService } from "./withdrawals/service.js";
import { DepositSettlement } from "./deposits/settlement.js";
import { WebhookService } from "./webhooks/service.js";
import { SandboxDeposits, ONCHAIN_WATCHER } from "./sandbox/deposits.js";
import { webhookFeed } from "./sandbox/webhook-feed.js";
import { webhookSecretFor } from "./webhooks/secrets.js";
import { EventService } from "./events/service.js";
import { EventIds } from "./events/ids.js";
import { WebhookEndpointService } from "./webhook-endpoints/service.js";
import { DeliveryWorker } from "./webhook-endpoints/worker.js";
import { RetentionJob } from "./retention/job.js";
import { resolveWithDns, type ResolveHost } from "./webhook-endpoints/resolve-host.js";
import { afterCommit } from "./db/unit-of-work.js";
import { AuditLogService } from "./audit/service.js";
import { ChainRail } from "./rail/rail.js";
import { LiveNetworks } from "./chain/live.js";
import { SendQueue } from "./chain/send-queue.js";
import { Signers } from "./providers/treasury.js";
import { Destinations } from "./chain/destinations.js";
import { ForwardOutcome } from "./deposits/forward-outcome.js";

export type ServiceDeps = {
  prisma: PrismaClient;
  sql: SqlDatabase;
  config: Config;
  logger: Logger;
  mailer: Mailer;
  providers: Providers;
  /** The custodian's BIP-32 master key: the treasury and every deposit address derive from it. */
  masterKey: string;
  /** Cross-instance events (deposit updates). */
  events: Events;
  metrics: BusinessMetrics;
  /** How long a webhook receiver has to answer (10 s; tests shorten it). */
  webhookTimeoutMs?: number;
  /** Name resolution for webhook URLs (the system's DNS; tests give their own). */
  resolveHost?: ResolveHost;
};

/** The composition root: every domain service, wired once per process. */
export function createServices(deps: ServiceDeps) {
  const credentials = new CredentialCache({ events: deps.events, logger: deps.logger, ttlMs: deps.config.credentialCacheMs });
  const keys = new ApiKeyService(deps.prisma, credentials);
  const users = new UserService(deps.prisma, deps.sql);
  const ledger = new LedgerService(deps.prisma, deps.metrics.journals);
  const wallets = new WalletService({ prisma: deps.prisma, custodian: deps.providers.custodian, users, logger: deps.logger });
  const networks = new LiveNetworks(deps.config.chain);
  const signers = new Signers(deps.masterKey);
  const destinations = new Destinations({ sql: deps.sql, networks: deps.config.chain.networks, treasuries: { live: signers.treasury.live.address, test: signers.treasury.test.address } });
  const virtualAccounts = new VirtualAccountService({
    prisma: deps.prisma,
    networks,
    destinations,
    users,
    banks: [deps.providers.ngnBank, deps.providers.fiatBank],
    ensureWallet: (clientId, userId) => wallets.ensure(clientId, userId),
    logger: deps.logger,
  });
  const conversion = new ConversionService({ prisma: deps.prisma, users, ledger, fx: deps.providers.fx });
  const cardSpending = new CardSpendingService({ prisma: deps.prisma, users, ledger });
  const ttlMs = deps.config.cardAuthorizationTtlMs;
  const cardAuthorizations = new CardAuthorizationService({ prisma: deps.prisma, users, ledger, spending: cardSpending, ttlMs });
  const eventIds = new EventIds(deps.config.encryptionKey);
  const depositRoom = depositServices(deps, networks, signers, { users, ledger, wallets, virtualAccounts, conversion });
  const withdrawals = new WithdrawalService({ prisma: deps.prisma, users, ledger, metrics: deps.metrics, sends: depositRoom.sends, networks, destinations, chainIdOf: (mode, network) => depositRoom.chain.chainIdOf(mode, network) });
  depositRoom.chain.handle("WITHDRAWAL", withdrawals.chainOutcome);
  depositRoom.chain.handle("FORWARD", new ForwardOutcome({ ledger }));
  const auth = new AuthService({ prisma: deps.prisma, keys, credentials, mailer: deps.mailer, logger: deps.logger, secret: deps.config.jwtSecret,
    sandbox: deps.config.sandbox,
    sessionMode: deps.config.sandbox ? defaultMode(deps.config.env === "production") : "live",
  });
  return {
    config: deps.config,
    events: deps.events,
    keys,
    auth,
    credentials,
    audit: new AuditLogService({ prisma: deps.prisma, sql: deps.sql }),
    credentialWatch: new CredentialWatch({ auth, logger: deps.logger }),
    users,
    ledger,
    conversion,
    cardSpending,
    cardAuthorizations,
    cardAuthorizationExpiry: new CardAuthorizationExpiry({ authorizations: cardAuthorizations, ttlMs, logger: deps.logger }),
    wallets,
    cards: new CardService({ prisma: deps.prisma, issuer: deps.providers.cardIssuer, encryptionKey: deps.config.encryptionKey, logger: deps.logger }),
    cardTransactions: new CardTransactionService({ prisma: deps.prisma, users }),
    usdcAccounts: new UsdcAccountService({ prisma: deps.prisma, users, wallets, networks }),
    virtualAccounts,
    balanceLookup: new BalanceLookupService({ users, ledger }),
    withdrawals,
    eventIds,
    clientEvents: new EventService({ sql: deps.sql, bus: deps.events, ids: eventIds, logger: deps.logger }),
    retention: new RetentionJob({ sql: deps.sql, settings: deps.config.retention, logger: deps.logger }),
    ...webhookServices(deps, eventIds),
    ...depositRoom,
  };
}

/** Outbound webhooks: the client's endpoints and the worker that delivers to them. */
function webhookServices(deps: ServiceDeps, eventIds: EventIds) {
  // The deployment's setting, never SANDBOX: a public sandbox is as exposed as production.
  const strictUrls = !deps.config.webhookAllowPrivateUrls;
  const resolveHost = deps.resolveHost ?? resolveWithDns;
  const deliveryWorker = new DeliveryWorker({
    prisma: deps.prisma,
    sql: deps.sql,
    logger: deps.logger,
    encryptionKey: deps.config.encryptionKey,
    retryScheduleMs: deps.config.webhookRetryScheduleMs,
    timeoutMs: deps.webhookTimeoutMs ?? deps.config.webhookTimeoutMs,
    leaseMarginMs: deps.config.webhookLeaseMarginMs,
    concurrency: deps.config.webhookConcurrency.perInstance,
    perClientConcurrency: deps.config.webhookConcurrency.perClient,
    perEndpointConcurrency: deps.config.webhookConcurrency.perEndpoint,
    strictUrls,
    resolveHost,
    eventIds,
  });
  const webhookEndpoints = new WebhookEndpointService({
    prisma: deps.prisma,
    encryptionKey: deps.config.encryptionKey,
    strictUrls,
    resolveHost,
    eventIds,
    // After the commit: the worker must see the queued rows, and must not join a keyed request's transaction.
    onQueued: () => afterCommit(() => deliveryWorker.nudge()),
  });
  return { webhookEndpoints, deliveryWorker };
}

/** Deposits, the webhooks that drive them, and the sandbox that plays their providers. */
function depositServices(
  deps: ServiceDeps,
  networks: LiveNetworks,
  signers: Signers,
  domain: { users: UserService; ledger: LedgerService; wallets: WalletService; virtualAccounts: VirtualAccountService; conversion: ConversionService },
) {
  const sends = new SendQueue({ networks, treasury: { live: signers.treasury.live.address, test: signers.treasury.test.address }, onQueued: () => chain.nudge() });
  const deposits = new DepositService({
    prisma: deps.prisma,
    sql: deps.sql,
    settlement: new DepositSettlement({ ledger: domain.ledger, conversion: domain.conversion, sends }),
    events: deps.events,
    metrics: deps.metrics,
    autoSettleAfterMs: deps.config.sandbox ? deps.config.sandboxSettleMs : null,
  });
  const chain: ChainRail = new ChainRail({ networks, prisma: deps.prisma, sql: deps.sql, deposits, signers, metrics: deps.metrics.chain, logger: deps.logger });
  const providers = { [deps.providers.ngnBank.name]: "bank", [deps.providers.fiatBank.name]: "bank", [ONCHAIN_WATCHER]: "chain" } as const;
  // Derived once: every event is signed (sandbox) and verified with its provider's secret.
  const secrets = new Map(Object.keys(providers).map((provider) => [provider, webhookSecretFor(deps.config, provider)]));
  const secretFor = (provider: string) => secrets.get(provider) ?? webhookSecretFor(deps.config, provider);
  const webhooks = new WebhookService({
    prisma: deps.prisma,
    sql: deps.sql,
    secretFor,
    providers,
    deposits,
    virtualAccounts: domain.virtualAccounts,
    logger: deps.logger,
    metrics: deps.metrics,
    // Its chain events are the sandbox's: an on-chain network's deposits come from the chain alone.
    networkFor: (mode, chainId) => chain.networkFor(mode, chainId),
  });
  const sandboxDeposits = new SandboxDeposits({
    prisma: deps.prisma,
    ...domain,
    deposits,
    deliver: webhookFeed(webhooks, secretFor),
    networkFor: (mode, chainId) => chain.networkFor(mode, chainId),
  });
  return { deposits, webhooks, sandboxDeposits, chain, sends };
}

type WiredServices = ReturnType<typeof createServices>;
declare module "./graphql/context.js" {
  interface Services extends WiredServices {}
}
export type { Services } from "./graphql/context.js";
