import { randomBytes, randomUUID } from "node:crypto";
import { z } from "zod";
import type { Deposit, Prisma, PrismaClient } from "../generated/prisma/client.js";
import { VIRTUAL_ACCOUNT_CURRENCIES } from "../accounts/virtual-account-currencies.js";
import type { VirtualAccountService } from "../accounts/virtual-account-service.js";
import { notPending, type DepositService, type DepositSettling } from "../deposits/service.js";
import { DEPOSIT_TOKENS, isDepositToken, tokenContract } from "../deposits/tokens.js";
import type { Mode } from "../modes.js";
import { badInput } from "../errors.js";
import { CHAIN_PROVIDER_PREFIX } from "../chain/networks.js";
import { parseAmount } from "../money/amount.js";
import type { TokenSymbol } from "../providers/chains.js";
import type { Currency } from "../providers/fx.js";
import type { UserService } from "../users/service.js";
import type { WalletService } from "../wallets/service.js";
import { parseInput, upperCaseCode, uuid } from "../validation.js";
import type { ProviderEvent } from "../webhooks/events.js";
import type { DeliverEvent } from "./webhook-feed.js";

/** The provider name of the sandbox's on-chain watcher (the banking providers have their own names). */
export const ONCHAIN_WATCHER = "sandbox-chain";

const SIMULABLE = [...VIRTUAL_ACCOUNT_CURRENCIES, ...DEPOSIT_TOKENS];

export const SimulateDeposit = z.object({
  userId: uuid("userId"),
  currency: upperCaseCode("currency", SIMULABLE),
  amount: z.unknown(),
  chainId: z.number({ error: "chainId must be an integer" }).int("chainId must be an integer").nullish(),
});

type Arrival = { clientId: string; userId: string; amount: string; chainId?: number };
type DepositSelection = Pick<Prisma.DepositFindFirstArgs, "select" | "include">;
type Deps = {
  prisma: PrismaClient;
  users: UserService;
  wallets: WalletService;
  virtualAccounts: VirtualAccountService;
  deposits: DepositService;
  deliver: DeliverEvent;
  /** The live network a chain id designates, if any: money there comes only from the chain. */
  /** The on-chain network of a mode a chain id designates (src/chain/live.ts). */
  networkFor: (mode: Mode, chainId: number) => string | undefined;
};

const hex = (bytes: number) => randomBytes(bytes).toString("hex");
const newEventId = () => `evt_${randomUUID()}`;

/**
 * Sandbox helpers that act as the providers would: every step is a signed provider event through the
 * webhook path, so the sandbox exercises exactly what production runs.
 */
export class SandboxDeposits {
  constructor(private readonly deps: Deps) {}

  /**
   * Money arrives for a user: fiat at the user's virtual account in that currency (400 when there is
   * none), a token on-chain at the user's custodial wallet (created when absent, as a sender needs only
   * the address). Returns the PENDING deposit.
   */
  async simulate(clientId: string, input: Record<string, unknown>, query: DepositSelection = {}) {
    const args = parseInput(SimulateDeposit, input);
    const amount = parseAmount(args.amount, args.currency as Currency).toFixed();
    const user = await this.deps.users.get(clientId, args.userId, { select: { id: true } });
    const arrival = { clientId, userId: user.id, amount, chainId: args.chainId ?? undefined };
    const { provider, reference } = isDepositToken(args.currency)
      ? await this.arriveOnChain({ ...arrival, currency: args.currency })
      : await this.arriveAtBank({ ...arrival, currency: args.currency });
    return this.deps.prisma.deposit.findUniqueOrThrow({ ...query, where: { provider_eventId: { provider, eventId: reference } } });
  }

  /** The provider reports the PENDING deposit settled; a deposit no longer PENDING is a CONFLICT. */
  complete(clientId: string, id: unknown, query: DepositSelection = {}) {
    return this.reportSettled(clientId, id, "completed", query, (deposit) => ({ id: newEventId(), type: "deposit.completed", data: { reference: deposit.eventId } }));
  }

  /** The provider reports the PENDING deposit failed; a deposit no longer PENDING is a CONFLICT. */
  fail(clientId: string, id: unknown, reason: string | null | undefined, query: DepositSelection = {}) {
    return this.reportSettled(clientId, id, "failed", query, (deposit) => ({
      id: newEventId(),
      type: "deposit.failed",
      data: { reference: deposit.eventId, reason: reason?.trim() || "Failed in the sandbox" },
    }));
  }

  /**
   * Delivers the provider's event for a PENDING deposit, and returns the deposit as committed. The
   * event's transaction moves the deposit only if it is still PENDING (a conditional update, with its
   * money): when another settlement got there first, this one changed nothing and is a CONFLICT too.
   */
  private async reportSettled(clientId: string, id: unknown, settling: DepositSettling, query: DepositSelection, event: (deposit: Deposit) => ProviderEvent) {
    const deposit = await this.deps.deposits.getPending(clientId, id, settling);
    if (deposit.provider.startsWith(CHAIN_PROVIDER_PREFIX)) {
      const network = deposit.provider.slice(CHAIN_PROVIDER_PREFIX.length).toUpperCase();
      throw badInput(`The deposit is on ${network} (${deposit.chainId}), a live network: only the chain settles it`);
    }
    const { changed } = await this.deps.deliver(deposit.provider, event(deposit));
    if (!changed) throw notPending((await this.deps.deposits.get(clientId, deposit.id)).status, settling);
    // The row the webhook's transaction committed is final: without relations to select, no need to read it again.
    return Object.keys(query).length === 0 ? changed : this.deps.deposits.get(clientId, deposit.id, query);
  }

  /**
   * The sandbox provider's own settlement when a deposit's time has come. The event id is derived
   * from the deposit, so instances that race on the same deposit deliver one event, applied once.
   */
  settle(deposit: { id: string; provider: string; eventId: string }) {
    return this.deps.deliver(deposit.provider, { id: `sandbox-settle:${deposit.id}`, type: "deposit.completed", data: { reference: deposit.eventId } });
  }

  private async arriveOnChain(arrival: Arrival & { currency: TokenSymbol }) {
    const chainId = arrival.chainId ?? 1;
    // Helpers run in test mode only; a test network on a test chain gets its deposits from that chain alone.
    const onChain = this.deps.networkFor("test", chainId);
    if (onChain) throw badInput(`chainId: ${onChain} (${chainId}) is on a test chain: its deposits come only from the chain`);
    const tokenAddress = tokenContract(arrival.currency, chainId);
    const wallet = await this.deps.wallets.ensure(arrival.clientId, arrival.userId, { select: { address: true } });
    const transactionHash = `0x${hex(32)}`;
    // An on-chain deposit is known by its transfer event: transaction hash and log index.
    const reference = `${transactionHash}:0`;
    await this.deps.deliver(ONCHAIN_WATCHER, {
      id: newEventId(),
      type: "deposit.received",
      data: { reference, address: wallet.address, amount: arrival.amount, currency: arrival.currency, tokenAddress, transactionHash, chainId },
    });
    return { provider: ONCHAIN_WATCHER, reference };
  }

  private async arriveAtBank(arrival: Arrival & { currency: string }) {
    if (arrival.chainId !== undefined) throw badInput("chainId applies to on-chain currencies only (USDC, USDT, DAI)");
    const account = await this.deps.virtualAccounts.getForUser(arrival.clientId, arrival.userId, arrival.currency);
    if (!account) throw badInput(`The user has no ${arrival.currency} virtual account`);
    const reference = `sbx_${hex(16)}`;
    await this.deps.deliver(account.provider, {
      id: newEventId(),
      type: "deposit.received",
      data: {
        reference,
        accountNumber: account.accountNumber,
        amount: arrival.amount,
        currency: arrival.currency,
        ...(arrival.currency === "NGN" ? { paymentReference: `NIP${hex(12).toUpperCase()}` } : {}),
      },
    });
    return { provider: account.provider, reference };
  }
}
