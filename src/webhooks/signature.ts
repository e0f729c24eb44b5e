import { createHmac, timingSafeEqual } from "node:crypto";
import { unauthenticated } from "../errors.js";

/** A signed event older than this, or this far in the future, is refused (replays of captured requests). */
export const SIGNATURE_TOLERANCE_S = 5 * 60;

const hmac = (secret: string, timestamp: number, rawBody: string) =>
  createHmac("sha256", secret).update(`${timestamp}.${rawBody}`).digest("hex");

/** The `x-webhook-signature` header value for a body: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">`. */
export function signWebhook(secret: string, rawBody: string, timestamp = Math.floor(Date.now() / 1000)): string {
  return `t=${timestamp},v1=${hmac(secret, timestamp, rawBody)}`;
}

/** Throws UNAUTHENTICATED unless the header is a fresh, valid signature of exactly this body. */
export function verifyWebhookSignature(secret: string, header: string | undefined, rawBody: string, nowMs = Date.now()): void {
  if (!header) throw unauthenticated("Missing x-webhook-signature header");
  const parts = header.split(",").map((part) => part.trim().split("="));
  const timestamp = Number(parts.find(([key]) => key === "t")?.[1]);
  // Several v1 values are allowed, so a provider can sign with an old and a new secret while rotating.
  const signatures = parts.filter(([key, value]) => key === "v1" && value).map(([, value]) => value);
  if (!Number.isInteger(timestamp) || signatures.length === 0) throw unauthenticated("Malformed x-webhook-signature header");
  if (Math.abs(nowMs / 1000 - timestamp) > SIGNATURE_TOLERANCE_S) throw unauthenticated("Webhook timestamp is outside the 5-minute tolerance");
  const expected = Buffer.from(hmac(secret, timestamp, rawBody), "hex");
  const matches = signatures.some((signature) => {
    const given = Buffer.from(signature, "hex");
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw unauthenticated("Invalid webhook signature");
}
