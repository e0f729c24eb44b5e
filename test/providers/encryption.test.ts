import { randomBytes } from "node:crypto";
import { describe, it, expect } from "vitest";
import { decrypt, encrypt } from "../../src/providers/encryption.js";

const key = randomBytes(32);

describe("encryption", () => {
  it("round-trips text through the v1 format with a fresh IV each time", () => {
    const a = encrypt(key, "4231 5600 1234 5678");
    const b = encrypt(key, "4231 5600 1234 5678");
    expect(a).toMatch(/^v1:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$/);
    expect(a).not.toBe(b);
    expect(decrypt(key, a)).toBe("4231 5600 1234 5678");
    expect(decrypt(key, encrypt(key, ""))).toBe("");
  });

  it("rejects a tampered ciphertext, tag or IV", () => {
    const [v, iv, tag, data] = encrypt(key, "123").split(":");
    const flip = (b64: string) => {
      const buf = Buffer.from(b64, "base64");
      buf[0] ^= 1;
      return buf.toString("base64");
    };
    expect(() => decrypt(key, [v, iv, tag, flip(data)].join(":"))).toThrow();
    expect(() => decrypt(key, [v, iv, flip(tag), data].join(":"))).toThrow();
    expect(() => decrypt(key, [v, flip(iv), tag, data].join(":"))).toThrow();
    expect(() => decrypt(key, "garbage")).toThrow();
  });

  it("rejects decryption with another key", () => {
    expect(() => decrypt(randomBytes(32), encrypt(key, "123"))).toThrow();
  });
});
