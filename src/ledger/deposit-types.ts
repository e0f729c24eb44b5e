import type { Decimal } from "decimal.js";

/**
 * A deposit's shared shapes, in a module of their own so that the ledger and the deposit records can
 * use them without importing the deposit service (which imports both).
 */
export const DEPOSIT_STATUS = { PENDING: "PENDING", COMPLETED: "COMPLETED", FAILED: "FAILED" } as const;
export type DepositStatus = keyof typeof DEPOSIT_STATUS;
export const DEPOSIT_STATUSES = Object.values(DEPOSIT_STATUS);

/** A deposit as a provider reports it: who it is for, what arrived, and where. */
export type IncomingDeposit = {
  provider: string;
  /** The provider's reference of the incoming payment (on-chain: the transfer's event reference). */
  eventId: string;
  clientId: string;
  userId: string;
  amount: Decimal;
  currency: string;
  virtualAccountId?: string;
  paymentReference?: string;
  tokenAddress?: string;
  transactionHash?: string;
  chainId?: number;
  /** From a live network: only the chain settles it, never the sandbox's timer. */
  live?: boolean;
};
