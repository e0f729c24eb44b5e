import { z } from "zod";
import type { Prisma, PrismaClient, VirtualAccount } from "../generated/prisma/client.js";
import { isUniqueViolation } from "../db/errors.js";
import { prismaSql } from "../db/sql.js";
import { AppError } from "../errors.js";
import { recordEvent } from "../events/log.js";
import { virtualAccountObject } from "./virtual-account-representation.js";
import type { LiveNetworks } from "../chain/live.js";
import type { Destinations } from "../chain/destinations.js";
import { modeOf } from "../modes.js";
import type { Logger } from "../logger.js";
import { metadataChanges, newMetadata } from "../metadata.js";
import type { BankAccountDetails, BankingProvider } from "../providers/banking.js";
import type { UserService } from "../users/service.js";
import { evmAddress, parseCurrency, parseInput, upperCaseCode, uuid } from "../validation.js";
import { parseDeveloperFeePercent } from "../developer-fees/rules.js";
import { VIRTUAL_ACCOUNT_CURRENCIES, type VirtualAccountCurrency } from "./virtual-account-currencies.js";


const DESTINATION_ASSETS = ["USDC", "USDT", "DAI"] as const;
const DESTINATION_NETWORKS = ["ETHEREUM", "POLYGON", "BASE", "ARBITRUM", "OPTIMISM"] as const;

export const CreateVirtualAccount = z.object({
  userId: uuid("userId"),
  destinationAsset: upperCaseCode("destinationAsset", DESTINATION_ASSETS).default("USDC"),
  destinationNetwork: upperCaseCode("destinationNetwork", DESTINATION_NETWORKS).default("ETHEREUM"),
  address: evmAddress("address").optional(),
  /** Checked by parseDeveloperFeePercent (0–10, 2 decimals); a JSON number or a decimal string. */
  developerFeePercent: z.unknown().optional(),
  metadata: metadataChanges,
});

export type CreateVirtualAccountInput = { currency: unknown } & Record<string, unknown>;

/** The user's custodial wallet, created when absent (the wallets service's get-or-create). */
export type EnsureWallet = (clientId: string, userId: string) => Promise<{ address: string }>;

type Deps = {
  prisma: PrismaClient;
  users: UserService;
  banks: readonly BankingProvider[];
  ensureWallet: EnsureWallet;
  logger: Logger;
  /** Which networks a forward may go to, per mode (src/chain/live.ts). */
  networks: Pick<LiveNetworks, "assertUsable">;
  /** Where a forward may not go (src/chain/destinations.ts). */
  destinations: Pick<Destinations, "assertOutside">;
};

/** Bank accounts that receive fiat for a user; one per (user, currency). An existing account is returned as it is (its metadata too). */
export class VirtualAccountService {
  constructor(private readonly deps: Deps) {}

  async create(clientId: string, input: CreateVirtualAccountInput): Promise<VirtualAccount> {
    const currency = parseCurrency(input.currency, VIRTUAL_ACCOUNT_CURRENCIES);
    const args = parseInput(CreateVirtualAccount, withoutNulls(input));
    const developerFeePercent = parseDeveloperFeePercent(args.developerFeePercent);
    const user = await this.deps.users.get(clientId, args.userId);
    this.deps.networks.assertUsable(await modeOf(this.deps.prisma, clientId), args.destinationNetwork, args.destinationAsset, "destinationNetwork", "destinationAsset");

    // The user's own custodial wallet is allowed (the default: nothing is forwarded); any other of the platform's addresses is not.
    if (args.address !== undefined) await this.deps.destinations.assertOutside(args.address, "address", user.id);

    const existing = await this.findOwn(user.id, currency);
    if (existing) return existing;

    const destinationAddress = args.address ?? (await this.deps.ensureWallet(clientId, user.id)).address;
    const provider = this.providerFor(currency);
    const details = await this.issue(provider, currency, `${user.firstName} ${user.lastName}`);
    try {
      return await this.deps.prisma.$transaction(async (tx) => {
        const account = await tx.virtualAccount.create({
          data: {
            userId: user.id,
            clientId,
            currency,
            provider: provider.name,
            destinationAsset: args.destinationAsset,
            destinationNetwork: args.destinationNetwork,
            destinationAddress,
            developerFeePercent: developerFeePercent.toFixed(),
            ...columnsOf(details),
            metadata: newMetadata(args.metadata),
          },
        });
        await recordEvent(prismaSql(tx), { clientId, userId: user.id, type: "virtual_account.created", object: virtualAccountObject(account) });
        return account;
      });
    } catch (err) {
      // A concurrent request for the same (user, currency) won: theirs is the account.
      const winner = isUniqueViolation(err) ? await this.findOwn(user.id, currency) : null;
      if (winner) return winner;
      throw err;
    }
  }

  /** The user's account in a currency, or null; another client's user has none. */
  getForUser(clientId: string, userId: string, currency: string, query: Prisma.VirtualAccountFindFirstArgs = {}) {
    return this.deps.prisma.virtualAccount.findFirst({
      ...query,
      where: { clientId, userId, currency: currency.toUpperCase() },
    });
  }

  /** The account a provider's incoming payment is addressed to (providers know accounts by number). */
  findByAccountNumber(provider: string, accountNumber: string) {
    return this.deps.prisma.virtualAccount.findUnique({
      where: { provider_accountNumber: { provider, accountNumber } },
    });
  }

  private findOwn(userId: string, currency: VirtualAccountCurrency) {
    return this.deps.prisma.virtualAccount.findUnique({ where: { userId_currency: { userId, currency } } });
  }

  private providerFor(currency: VirtualAccountCurrency): BankingProvider {
    const provider = this.deps.banks.find((bank) => bank.currencies.includes(currency));
    if (!provider) throw new AppError("PROVIDER_ERROR", "Virtual account could not be created", { details: `No provider serves ${currency}` });
    return provider;
  }

  private async issue(provider: BankingProvider, currency: string, holderName: string): Promise<BankAccountDetails> {
    try {
      return await provider.createVirtualAccount({ currency, holderName });
    } catch (err) {
      this.deps.logger.error({ err, provider: provider.name, currency }, "virtual account provider failed");
      throw new AppError("PROVIDER_ERROR", "Virtual account could not be created", {
        details: `The ${currency} account provider did not issue an account; try again later`,
      });
    }
  }
}

/** GraphQL passes omitted optional fields as null; zod defaults apply to undefined only. */
function withoutNulls(input: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(input).filter(([, value]) => value !== null));
}

/** Only the documented detail fields reach the row, whatever else a provider returns. */
function columnsOf(details: BankAccountDetails) {
  const common = { bankName: details.bankName, accountNumber: details.accountNumber };
  if ("routingNumber" in details) {
    return {
      ...common,
      routingNumber: details.routingNumber,
      accountHolderName: details.accountHolderName,
      accountHolderType: details.accountHolderType,
      bankAddress: details.bankAddress,
    };
  }
  return { ...common, accountName: details.accountName, bankCode: details.bankCode };
}
