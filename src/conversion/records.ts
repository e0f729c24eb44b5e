import { randomUUID } from "node:crypto";
import type { Decimal } from "decimal.js";
import type { Sql } from "../db/sql.js";
import { Prisma, type Conversion } from "../generated/prisma/client.js";

type ConversionTerms = { from: string; to: string; amount: Decimal; rate: Decimal; fee: Decimal; convertedAmount: Decimal };

type Decimals = "amount" | "rate" | "fee" | "convertedAmount";
type ConversionRow = Omit<Conversion, Decimals> & Record<Decimals, string>;

const INSERT = `
  INSERT INTO "conversions" ("id", "clientId", "userId", "quoteId", "from", "to", "amount", "rate", "fee", "convertedAmount", "createdAt")
  VALUES ($1::uuid, $2::uuid, $3::uuid, $4::uuid, $5, $6, $7::numeric, $8::numeric, $9::numeric, $10::numeric, $11::timestamptz)
  RETURNING "id", "clientId", "userId", "quoteId", "from", "to", "amount"::text AS "amount", "rate"::text AS "rate", "fee"::text AS "fee",
            "convertedAmount"::text AS "convertedAmount", "createdAt"`;

/** The conversion record, in the caller's transaction, as Prisma would have returned it (its decimals as Decimals). */
export async function insertConversion(tx: Sql, clientId: string, userId: string, terms: ConversionTerms, quoteId: string | null): Promise<Conversion> {
  const [row] = await tx.query<ConversionRow>("conversion_insert", INSERT, [
    ...[randomUUID(), clientId, userId, quoteId, terms.from, terms.to],
    ...[terms.amount.toFixed(), terms.rate.toFixed(), terms.fee.toFixed(), terms.convertedAmount.toFixed(), new Date()],
  ]);
  const decimal = (text: string) => new Prisma.Decimal(text);
  return { ...row, amount: decimal(row.amount), rate: decimal(row.rate), fee: decimal(row.fee), convertedAmount: decimal(row.convertedAmount) };
}
