import type { PrismaClient } from "../generated/prisma/client.js";
import { SandboxNgnProvider, SandboxFiatProvider, type BankingProvider } from "./banking.js";
import { SandboxCardIssuer, type CardIssuer } from "./card-issuer.js";
import { SandboxCustodian, type WalletCustodian } from "./custodian.js";
import { SandboxFxSource, type FxSource } from "./fx.js";

export type Providers = {
  custodian: WalletCustodian;
  cardIssuer: CardIssuer;
  /** Serves NGN. */
  ngnBank: BankingProvider;
  /** Serves USD, EUR, MXN, BRL. */
  fiatBank: BankingProvider;
  fx: FxSource;
};

export function createSandboxProviders(opts: { prisma: PrismaClient; masterKey: string }): Providers {
  return {
    custodian: new SandboxCustodian(opts),
    cardIssuer: new SandboxCardIssuer(),
    ngnBank: new SandboxNgnProvider(),
    fiatBank: new SandboxFiatProvider(),
    fx: new SandboxFxSource(),
  };
}
