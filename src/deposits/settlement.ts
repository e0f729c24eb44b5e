import { randomBytes } from "node:crypto";
import type { Decimal } from "decimal.js";
import type { Address } from "viem";
import type { ConversionService } from "../conversion/service.js";
import type { SendQueue } from "../chain/send-queue.js";
import type { Sql } from "../db/sql.js";
import { modeOf } from "../modes.js";
import { afterCommit } from "../db/unit-of-work.js";
import type { Deposit } from "../generated/prisma/client.js";
import { Exact } from "../money/amount.js";
import type { LedgerService } from "../ledger/service.js";
import type { JournalInput } from "../ledger/types.js";
import { developerFeePostings, percentOf } from "../developer-fees/rules.js";
import type { Currency } from "../providers/fx.js";
import type { Destination } from "./records.js";

type Deps = { ledger: LedgerService; conversion: Pick<ConversionService, "prepareInTransaction">; sends: Pick<SendQueue, "isOnChain" | "queue" | "nudge"> };

/** A 32-byte transaction hash for the sandbox's on-chain forward (no real chain is touched). */
const sandboxTransactionHash = () => `0x${randomBytes(32).toString("hex")}`;

/**
 * The money of a completed deposit, inside the caller's transaction (all of it commits or none):
 * the DEPOSIT credit; for a virtual account, the conversion to its destinationAsset, the client's
 * developer fee (FEE, in that asset, to the client's revenue) when the account charges one and, unless
 * the destination is the user's own custodial wallet, the TRANSFER_OUT of what is left. On a live
 * destination network the transfer is queued for the chain's sender in the same transaction; its
 * TRANSFER_OUT entries then carry the deposit's id, and the deposit record the real transaction hash.
 * These journals are posted together: one lock statement and one write for all of them.
 */
export class DepositSettlement {
  constructor(private readonly deps: Deps) {}

  /** `destination`: a virtual account deposit's, as moveDeposit read it (null on-chain). */
  async settle(tx: Sql, deposit: Deposit, destination: Destination | null): Promise<void> {
    const amount = new Exact(deposit.amount.toString());
    const { clientId, userId } = deposit;
    const credit: JournalInput = {
      clientId,
      type: "DEPOSIT",
      referenceId: deposit.id,
      postings: [
        { account: { userId, currency: deposit.currency }, amount, type: "DEPOSIT" },
        {
          account: { system: deposit.virtualAccountId ? "PROVIDER_SETTLEMENT" : "ONCHAIN_SETTLEMENT", currency: deposit.currency },
          amount: amount.negated(),
          type: "DEPOSIT",
        },
      ],
    };
    const forward = deposit.virtualAccountId ? await this.forward(tx, deposit, amount, destination) : [];
    await this.deps.ledger.postAll(tx, [credit, ...forward]);
  }

  /** The journals that move a virtual account deposit on: its conversion, the developer fee, then (to an outside address) the transfer. */
  private async forward(tx: Sql, deposit: Deposit, amount: Decimal, account: Destination | null): Promise<JournalInput[]> {
    if (!account) throw new Error(`Virtual account ${deposit.virtualAccountId} of deposit ${deposit.id} not found`);
    const { convertedAmount, journal } = await this.deps.conversion.prepareInTransaction(tx, {
      clientId: deposit.clientId,
      userId: deposit.userId,
      from: deposit.currency,
      to: account.destinationAsset,
      amount,
    });
    const asset = account.destinationAsset as Currency;
    const developerFee = percentOf(convertedAmount, account.developerFeePercent, asset);
    const fee: JournalInput[] = developerFee.isZero()
      ? []
      : [{ clientId: deposit.clientId, type: "FEE", referenceId: deposit.id, postings: developerFeePostings(deposit.userId, asset, developerFee) }];
    const forwarded = convertedAmount.minus(developerFee);
    const ownWallet = account.walletAddress?.toLowerCase() === account.destinationAddress.toLowerCase();
    if (ownWallet) return [journal, ...fee];
    const mode = await modeOf(tx, deposit.clientId);
    const live = this.deps.sends.isOnChain(mode, account.destinationNetwork);
    // Live mode simulates nothing: a forward whose network is not live (any more) is not booked as sent;
    // the converted money stays in the user's balance (virtual accounts refuse such a network at creation).
    if (!live && mode === "live") return [journal, ...fee];
    if (live) {
      const forward = { mode, network: account.destinationNetwork, purpose: "FORWARD", purposeId: deposit.id, to: account.destinationAddress as Address, symbol: asset, amount: forwarded.toFixed() } as const;
      await this.deps.sends.queue(tx, forward);
      afterCommit(() => this.deps.sends.nudge());
    }
    // Sandbox: the forward's (made-up) hash is the reference of its entries. Live: the deposit's id (the
    // hash is known once signed, and changes if the send is replaced), and the deposit record carries the hash.
    const transfer: JournalInput = {
      clientId: deposit.clientId,
      type: "TRANSFER_OUT",
      referenceId: live ? deposit.id : sandboxTransactionHash(),
      postings: [
        { account: { userId: deposit.userId, currency: asset }, amount: forwarded.negated(), type: "TRANSFER_OUT" },
        { account: { system: "ONCHAIN_SETTLEMENT", currency: asset }, amount: forwarded, type: "TRANSFER_OUT" },
      ],
    };
    return [journal, ...fee, transfer];
  }
}
