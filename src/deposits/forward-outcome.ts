import type { ChainSend } from "../chain/send-records.js";
import type { SendOutcome } from "../chain/sender.js";
import { prismaSql } from "../db/sql.js";
import type { Tx } from "../db/transaction.js";
import { Exact } from "../money/amount.js";
import type { LedgerService } from "../ledger/service.js";

const RECORD_HASH = `UPDATE "deposits" SET "transactionHash" = $2, "updatedAt" = now() WHERE "id" = $1::uuid`;
const FORWARDED = `
  SELECT d."clientId", d."userId", va."destinationAsset" AS "asset"
  FROM "deposits" d JOIN "virtual_accounts" va ON va."id" = d."virtualAccountId" WHERE d."id" = $1::uuid`;

/**
 * The chain's side of a virtual-account deposit forwarded on a live network: the deposit record
 * carries the forward's transaction hash (the latest broadcast, then the one mined); a forward that
 * fails comes back to the user's balance in the destination asset (TRANSFER_OUT_REVERSAL, referenced
 * by the deposit's id like the TRANSFER_OUT it reverses).
 */
export class ForwardOutcome implements SendOutcome {
  constructor(private readonly deps: { ledger: LedgerService }) {}

  async sent(tx: Tx, send: ChainSend, hash: string) {
    await prismaSql(tx).query("deposit_forward_hash", RECORD_HASH, [send.purposeId, hash]);
  }

  async confirmed(tx: Tx, send: ChainSend, hash: string) {
    await prismaSql(tx).query("deposit_forward_hash", RECORD_HASH, [send.purposeId, hash]);
  }

  async failed(tx: Tx, send: ChainSend) {
    const sql = prismaSql(tx);
    const [deposit] = await sql.query<{ clientId: string; userId: string; asset: string }>("deposit_forwarded", FORWARDED, [send.purposeId]);
    if (!deposit) throw new Error(`deposit ${send.purposeId} of a forward not found`);
    const amount = new Exact(send.amount);
    await this.deps.ledger.post(sql, {
      clientId: deposit.clientId,
      type: "TRANSFER_OUT_REVERSAL",
      referenceId: send.purposeId,
      postings: [
        { account: { userId: deposit.userId, currency: deposit.asset }, amount, type: "TRANSFER_OUT_REVERSAL" },
        { account: { system: "ONCHAIN_SETTLEMENT", currency: deposit.asset }, amount: amount.negated(), type: "TRANSFER_OUT_REVERSAL" },
      ],
    });
  }
}
