import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { decrypt, encrypt } from "../providers/encryption.js";

/** A Standard Webhooks secret: `whsec_` and the base64 of 32 random bytes. */
export const newSecret = () => `whsec_${randomBytes(32).toString("base64")}`;

export const sealSecret = (key: Buffer, secret: string) => encrypt(key, secret);
export const openSecret = (key: Buffer, sealed: string) => decrypt(key, sealed);

/**
 * The `webhook-signature` header: one `v1,<base64>` per secret, space-separated (a receiver
 * accepts the message when any of them verifies, which is what lets a rotation overlap).
 */
export function signatureHeader(secrets: readonly string[], messageId: string, timestamp: Date, payload: string): string {
  return secrets.map((secret) => new Webhook(secret).sign(messageId, timestamp, payload)).join(" ");
}
