import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

const ALGORITHM = "aes-256-gcm";
const VERSION = "v1";

function checkKey(key: Buffer): void {
  if (key.length !== 32) throw new Error("encryption key must be 32 bytes");
}

/** AES-256-GCM; output `v1:<iv>:<tag>:<data>`, each part base64. */
export function encrypt(key: Buffer, plaintext: string): string {
  checkKey(key);
  const iv = randomBytes(12);
  const cipher = createCipheriv(ALGORITHM, key, iv);
  const data = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [VERSION, iv.toString("base64"), tag.toString("base64"), data.toString("base64")].join(":");
}

/** Throws when the ciphertext is malformed, was tampered with, or the key is wrong. */
export function decrypt(key: Buffer, ciphertext: string): string {
  checkKey(key);
  const parts = ciphertext.split(":");
  if (parts.length !== 4 || parts[0] !== VERSION) throw new Error("malformed ciphertext");
  const [, iv, tag, data] = parts.map((p) => Buffer.from(p, "base64"));
  if (iv.length !== 12 || tag.length !== 16) throw new Error("malformed ciphertext");
  const decipher = createDecipheriv(ALGORITHM, key, iv);
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(data), decipher.final()]).toString("utf8");
}
