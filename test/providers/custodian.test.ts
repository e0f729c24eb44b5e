import { pbkdf2Sync, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HDKey } from "@scure/bip32";
import { describe, it, expect } from "vitest";
import { getAddress, isAddress } from "viem";
import { deriveAddress, loadOrCreateMasterKey } from "../../src/providers/custodian.js";

// BIP-39 seed of the well-known Hardhat/Anvil development mnemonic, computed here per the BIP-39 spec.
const seed = pbkdf2Sync("test test test test test test test test test test test junk", "mnemonic", 2048, 64, "sha512");
const xprv = HDKey.fromMasterSeed(seed).privateExtendedKey;

describe("custodian address derivation", () => {
  it("matches the published addresses of the Hardhat development accounts", () => {
    expect(deriveAddress(xprv, 0)).toBe("0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266");
    expect(deriveAddress(xprv, 1)).toBe("0x70997970C51812dc3A010C7d01b50e0d17dc79C8");
  });

  it("gives distinct EIP-55 addresses per index and the same address for the same index", () => {
    const a = deriveAddress(xprv, 0);
    const b = deriveAddress(xprv, 1);
    expect(a).not.toBe(b);
    for (const address of [a, b]) {
      expect(isAddress(address, { strict: true })).toBe(true);
      expect(getAddress(address.toLowerCase())).toBe(address);
    }
    expect(deriveAddress(xprv, 1)).toBe(b);
  });

  it("refuses an extended public key", () => {
    const xpub = HDKey.fromExtendedKey(xprv).publicExtendedKey;
    expect(() => deriveAddress(xpub, 0)).toThrow();
  });
});

describe("custodian master key", () => {
  it("prefers the configured key", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "custodian-"));
    expect(loadOrCreateMasterKey({ configured: xprv, dataDir, encryptionKey: randomBytes(32) })).toBe(xprv);
  });

  it("creates an xprv once, keeps it encrypted and returns the same one afterwards", () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), "custodian-")), "nested");
    const encryptionKey = randomBytes(32);
    const first = loadOrCreateMasterKey({ dataDir, encryptionKey });
    expect(first).toMatch(/^xprv/);
    expect(HDKey.fromExtendedKey(first).privateKey).not.toBeNull();
    const stored = readFileSync(join(dataDir, "custodian-master-key.enc"), "utf8");
    expect(stored).toMatch(/^v1:/);
    expect(stored).not.toContain(first);
    expect(loadOrCreateMasterKey({ dataDir, encryptionKey })).toBe(first);
    expect(() => loadOrCreateMasterKey({ dataDir, encryptionKey: randomBytes(32) })).toThrow();
  });
});
