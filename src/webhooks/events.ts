import { z } from "zod";
import { badInput } from "../errors.js";
import { parseInput } from "../validation.js";

/**
 * What providers send. Every event has its own `id` (applied at most once) and names the deposit by
 * the provider's `reference` (the deposit's eventId), so received → completed | failed can arrive
 * as separate events, each retried independently.
 */
const eventId = z.string({ error: "id is required" }).trim().min(1, "id is required").max(200, "id is at most 200 characters");
const reference = z.string({ error: "data.reference is required" }).trim().min(1, "reference is required").max(200);
const amount = z.union([z.string(), z.number()], { error: "amount must be a decimal number" });
const text = (field: string) => z.string({ error: `${field} is required` }).trim().min(1, `${field} is required`).max(200);

const completed = z.object({ id: eventId, type: z.literal("deposit.completed"), data: z.object({ reference }) });
const failed = z.object({
  id: eventId,
  type: z.literal("deposit.failed"),
  data: z.object({ reference, reason: z.string().trim().min(1).max(500).optional() }),
});

/** Banking providers: money arrived on a virtual account, known to them by its account number. */
const bankReceived = z.object({
  id: eventId,
  type: z.literal("deposit.received"),
  data: z.object({
    reference,
    accountNumber: text("accountNumber"),
    amount,
    currency: text("currency"),
    paymentReference: text("paymentReference").optional(),
  }),
});

/** The on-chain watcher: a token transfer to a custodial wallet address. */
const chainReceived = z.object({
  id: eventId,
  type: z.literal("deposit.received"),
  data: z.object({
    reference,
    address: text("address"),
    amount,
    currency: text("currency"),
    tokenAddress: text("tokenAddress"),
    transactionHash: z.string({ error: "transactionHash is required" }).regex(/^0x[0-9a-fA-F]{64}$/, "transactionHash must be 0x and 64 hex digits"),
    chainId: z.number({ error: "chainId must be an integer" }).int("chainId must be an integer"),
  }),
});

/** Refuses bytes that are not UTF-8 (instead of turning them into U+FFFD). */
const utf8 = new TextDecoder("utf-8", { fatal: true });

const EVENT_TYPES = ["deposit.received", "deposit.completed", "deposit.failed"];
const bankEvent = z.discriminatedUnion("type", [bankReceived, completed, failed]);
const chainEvent = z.discriminatedUnion("type", [chainReceived, completed, failed]);

export type ProviderKind = "bank" | "chain";
export type BankEvent = z.infer<typeof bankEvent>;
export type ChainEvent = z.infer<typeof chainEvent>;
export type ProviderEvent = BankEvent | ChainEvent;

/** The body as an event of the provider's kind; a 400 naming what is wrong otherwise. */
export function parseProviderEvent(kind: ProviderKind, rawBody: Buffer): ProviderEvent {
  let text: string;
  try {
    text = utf8.decode(rawBody);
  } catch {
    throw badInput("The body is not UTF-8 text");
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw badInput("Malformed JSON body");
  }
  const type = (body as { type?: unknown } | null)?.type;
  if (typeof type !== "string" || !EVENT_TYPES.includes(type)) throw badInput(`type must be one of ${EVENT_TYPES.join(", ")}`);
  return parseInput(kind === "bank" ? bankEvent : chainEvent, body);
}

/** Every event a provider may send, for the API reference. */
export const PROVIDER_EVENT = z.union([bankEvent, chainEvent]);
