import { getAddress, isAddress } from "viem";
import type { Deposit, PrismaClient } from "../generated/prisma/client.js";
import type { Sql, SqlDatabase } from "../db/sql.js";
import { modeOf, type Mode } from "../modes.js";
import { badInput, notFound } from "../errors.js";
import { parseAmount } from "../money/amount.js";
import type { Logger } from "../logger.js";
import type { BusinessMetrics } from "../metrics/metrics.js";
import type { Currency } from "../providers/fx.js";
import type { VirtualAccountService } from "../accounts/virtual-account-service.js";
import type { DepositService } from "../deposits/service.js";
import type { IncomingDeposit } from "../ledger/deposit-types.js";
import { isDepositToken, tokenContract } from "../deposits/tokens.js";
import { parseProviderEvent, type BankEvent, type ChainEvent, type ProviderEvent, type ProviderKind } from "./events.js";
import { verifyWebhookSignature } from "./signature.js";

type Deps = {
  prisma: PrismaClient;
  /** The events' transactions run on plain SQL: the money path of a deposit (see README, Measured). */
  sql: SqlDatabase;
  /** The secret each provider signs with (see ./secrets.ts). */
  secretFor: (provider: string) => string;
  /** Who may send events, and of which kind: banking providers by name, and the on-chain watcher. */
  providers: Record<string, ProviderKind>;
  deposits: DepositService;
  virtualAccounts: Pick<VirtualAccountService, "findByAccountNumber">;
  logger: Logger;
  metrics: Pick<BusinessMetrics, "providerWebhooks">;
  /** The live network a chain id designates, if any: the sandbox's chain events never reach it. */
  /** The on-chain network of a mode a chain id designates (src/chain/live.ts). */
  networkFor: (mode: Mode, chainId: number) => string | undefined;
};

export type WebhookDelivery = { provider: string; signature: string | undefined; rawBody: Buffer };
/** `changed`: the deposit as this event's transaction committed it (null when nothing changed). */
export type WebhookOutcome = { duplicate: boolean; changed: Deposit | null };

type ReceivedEvent = Extract<ProviderEvent, { type: "deposit.received" }>;

const RECORD_EVENT = `INSERT INTO "webhook_events" ("provider", "eventId", "type") VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING 1 AS "recorded"`;

/**
 * Provider events, authenticated by their signature and applied exactly once: the event id is
 * recorded in the same transaction as its effect, so a retry (or a concurrent duplicate) finds it
 * and changes nothing.
 */
export class WebhookService {
  constructor(private readonly deps: Deps) {}

  async receive({ provider, signature, rawBody }: WebhookDelivery): Promise<WebhookOutcome> {
    if (!Object.hasOwn(this.deps.providers, provider)) throw notFound(`Webhook provider ${provider}`);
    const kind = this.deps.providers[provider];
    verifyWebhookSignature(this.deps.secretFor(provider), signature, rawBody);
    const event = parseProviderEvent(kind, rawBody);
    // Targets are resolved before the transaction: on the embedded database a read outside it would wait for it.
    const incoming = event.type === "deposit.received" ? await this.incomingDeposit(provider, kind, event) : undefined;

    const outcome = await this.deps.sql.transaction(async (tx): Promise<WebhookOutcome> => {
      const recorded = await tx.query("webhook_event_record", RECORD_EVENT, [provider, event.id, event.type]);
      if (recorded.length === 0) return { duplicate: true, changed: null };
      return { duplicate: false, changed: await this.apply(tx, provider, event, incoming) };
    });
    const result = outcome.duplicate ? "duplicate" : outcome.changed ? "applied" : "unchanged";
    this.deps.metrics.providerWebhooks.inc({ provider, outcome: result });
    if (outcome.changed) this.deps.deposits.announce([outcome.changed]);
    else if (!outcome.duplicate) this.deps.logger.info({ provider, eventId: event.id, type: event.type }, "webhook event changed nothing");
    return outcome;
  }

  private apply(tx: Sql, provider: string, event: ProviderEvent, incoming: IncomingDeposit | undefined): Promise<Deposit | null> {
    switch (event.type) {
      case "deposit.received":
        return this.deps.deposits.receive(tx, incoming!);
      case "deposit.completed":
        return this.deps.deposits.complete(tx, provider, event.data.reference);
      case "deposit.failed":
        return this.deps.deposits.fail(tx, provider, event.data.reference, event.data.reason ?? "Failed by the provider");
    }
  }

  private incomingDeposit(provider: string, kind: ProviderKind, event: ReceivedEvent): Promise<IncomingDeposit> {
    return kind === "bank"
      ? this.bankDeposit(provider, event as Extract<BankEvent, ReceivedEvent>)
      : this.chainDeposit(provider, event as Extract<ChainEvent, ReceivedEvent>);
  }

  /** Fiat to a virtual account, which the provider knows by its account number. */
  private async bankDeposit(provider: string, { data }: Extract<BankEvent, ReceivedEvent>): Promise<IncomingDeposit> {
    const account = await this.deps.virtualAccounts.findByAccountNumber(provider, data.accountNumber);
    if (!account) throw notFound("Virtual account");
    if (data.currency.toUpperCase() !== account.currency) throw badInput(`currency: the account receives ${account.currency}`);
    return {
      provider,
      eventId: data.reference,
      clientId: account.clientId,
      userId: account.userId,
      virtualAccountId: account.id,
      amount: parseAmount(data.amount, account.currency as Currency),
      currency: account.currency,
      paymentReference: data.paymentReference,
    };
  }

  /** A token transfer to a custodial wallet; only the token's real contract on that chain counts. */
  private async chainDeposit(provider: string, { data }: Extract<ChainEvent, ReceivedEvent>): Promise<IncomingDeposit> {
    const currency = data.currency.toUpperCase();
    if (!isDepositToken(currency)) throw badInput("currency must be one of USDC, USDT, DAI");
    const contract = tokenContract(currency, data.chainId);
    if (data.tokenAddress.toLowerCase() !== contract.toLowerCase()) throw badInput(`tokenAddress is not the ${currency} contract on chain ${data.chainId}`);
    if (!isAddress(data.address, { strict: false })) throw badInput("address must be a 0x EVM address");
    const wallet = await this.deps.prisma.wallet.findUnique({ where: { address: getAddress(data.address) }, select: { clientId: true, userId: true } });
    if (!wallet) throw notFound("Wallet");
    // The sandbox's chain is play money: a live wallet's tokens, and any on a real chain, come only from that chain.
    const mode = await modeOf(this.deps.prisma, wallet.clientId);
    if (mode === "live") throw badInput("address: a live-mode wallet's deposits come only from a live chain, never from the sandbox's");
    const onChain = this.deps.networkFor(mode, data.chainId);
    if (onChain) throw badInput(`chainId: ${onChain} (${data.chainId}) is on a test chain: its deposits come only from the chain`);
    return {
      provider,
      eventId: data.reference,
      clientId: wallet.clientId,
      userId: wallet.userId,
      amount: parseAmount(data.amount, currency),
      currency,
      tokenAddress: contract,
      transactionHash: data.transactionHash,
      chainId: data.chainId,
    };
  }
}
