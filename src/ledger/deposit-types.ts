import type { Decimal } from "decimal.js";

/**
 * A deposit's shared shapes. They live in the ledger's folder, below deposits/, because the ledger
 * reads pending deposits for a balance; the deposit records and service import them from here.
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
