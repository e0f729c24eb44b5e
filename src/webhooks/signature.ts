import { createHmac, timingSafeEqual } from "node:crypto";
import { unauthenticated } from "../errors.js";

/** A signed event older than this, or this far in the future, is refused (replays of captured requests). */
export const SIGNATURE_TOLERANCE_S = 5 * 60;

const TIMESTAMP = /^\d{1,12}$/;
const SIGNATURE = /^[0-9a-f]{64}$/;

/** HMAC-SHA256 over the bytes `<t>.` followed by the raw body bytes, exactly as received. */
const hmac = (secret: string, timestamp: number, rawBody: Buffer | string) =>
  createHmac("sha256", secret).update(`${timestamp}.`).update(rawBody).digest();

/** The `x-webhook-signature` header value for a body: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "t." + body>`. */
export function signWebhook(secret: string, rawBody: Buffer | string, timestamp = Math.floor(Date.now() / 1000)): string {
  return `t=${timestamp},v1=${hmac(secret, timestamp, rawBody).toString("hex")}`;
}

/**
 * `t=<digits>,v1=<64 lower-case hex>[,v1=…]`, nothing else. Several v1 values are allowed, so a
 * provider can sign with an old and a new secret while rotating.
 */
function parseHeader(header: string): { timestamp: number; signatures: Buffer[] } {
  const malformed = () => unauthenticated("Malformed x-webhook-signature header: expected t=<unix seconds>,v1=<64 lower-case hex digits>");
  const timestamps: string[] = [];
  const signatures: Buffer[] = [];
  for (const part of header.split(",")) {
    const [key, value, extra] = part.trim().split("=");
    if (extra !== undefined) throw malformed();
    if (key === "t" && TIMESTAMP.test(value)) timestamps.push(value);
    else if (key === "v1" && SIGNATURE.test(value)) signatures.push(Buffer.from(value, "hex"));
    else throw malformed();
  }
  if (timestamps.length !== 1 || signatures.length === 0) throw malformed();
  return { timestamp: Number(timestamps[0]), signatures };
}

/** Throws UNAUTHENTICATED unless the header is a fresh, valid signature of exactly these bytes. */
export function verifyWebhookSignature(secret: string, header: string | undefined, rawBody: Buffer, nowMs = Date.now()): void {
  if (!header) throw unauthenticated("Missing x-webhook-signature header");
  const { timestamp, signatures } = parseHeader(header);
  if (Math.abs(nowMs / 1000 - timestamp) > SIGNATURE_TOLERANCE_S) throw unauthenticated("Webhook timestamp is outside the 5-minute tolerance");
  const expected = hmac(secret, timestamp, rawBody);
  // Every signature is compared (no early exit), each in constant time on the decoded 32 bytes.
  const matches = signatures.reduce((found, given) => timingSafeEqual(given, expected) || found, false);
  if (!matches) throw unauthenticated("Invalid webhook signature");
}
