import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { HDKey } from "@scure/bip32";
import type { Address } from "viem";
import { accountAt, DEPOSIT_ACCOUNT, depositAddressPath } from "./treasury.js";
import type { Mode } from "../modes.js";
import { makePrivateDir } from "../db/private-dir.js";
import type { PrismaClient } from "../generated/prisma/client.js";
import { decrypt, encrypt } from "./encryption.js";

export type CustodialWallet = {
  walletId: string;
  addressId: string;
  address: Address;
  blockchain: string;
};

export interface WalletCustodian {
  /** A new custodial address of `mode`'s own keys. */
  createWallet(mode: Mode): Promise<CustodialWallet>;
}

/** The EIP-55 address at m/44'/60'/0'/0/{index} of an xprv (the standard Ethereum account path). */
export function deriveAddress(masterKey: string, index: number, account = DEPOSIT_ACCOUNT.live): Address {
  return accountAt(masterKey, depositAddressPath(index, account)).address;
}

const MASTER_KEY_FILE = "custodian-master-key.enc";

/** The configured xprv, else the one kept encrypted under dataDir (created on first use). */
export function loadOrCreateMasterKey(opts: { configured?: string; dataDir: string; encryptionKey: Buffer }): string {
  if (opts.configured) return opts.configured;
  const file = join(opts.dataDir, MASTER_KEY_FILE);
  if (!existsSync(file)) {
    makePrivateDir(opts.dataDir);
    const xprv = HDKey.fromMasterSeed(randomBytes(64)).privateExtendedKey;
    try {
      // "wx": if another instance created the file first, keep theirs.
      writeFileSync(file, encrypt(opts.encryptionKey, xprv), { mode: 0o600, flag: "wx" });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
  }
  try {
    return decrypt(opts.encryptionKey, readFileSync(file, "utf8").trim());
  } catch {
    throw new Error(`${file} cannot be decrypted with this ENCRYPTION_KEY (it was written under another key)`);
  }
}

const randomId = (prefix: string) => `${prefix}_${randomBytes(12).toString("hex")}`;

/**
 * Custodial wallets from one HD master key: each wallet gets the next derivation index from the
 * database sequence, so addresses stay distinct across restarts and concurrent instances.
 */
export class SandboxCustodian implements WalletCustodian {
  private readonly prisma: PrismaClient;
  private readonly masterKey: string;

  constructor(opts: { prisma: PrismaClient; masterKey: string }) {
    this.prisma = opts.prisma;
    this.masterKey = opts.masterKey;
  }

  async createWallet(mode: Mode): Promise<CustodialWallet> {
    const account = DEPOSIT_ACCOUNT[mode];
    const [{ index }] = await this.prisma.$queryRaw<{ index: number }[]>`
      SELECT nextval(pg_get_serial_sequence('sandbox_custodian_addresses', 'derivationIndex'))::int AS index`;
    const row = await this.prisma.custodianAddress.create({
      data: {
        walletId: randomId("wal"),
        addressId: randomId("adr"),
        derivationIndex: index,
        account,
        address: deriveAddress(this.masterKey, index, account),
      },
    });
    return {
      walletId: row.walletId,
      addressId: row.addressId,
      address: row.address as Address,
      blockchain: "ETHEREUM",
    };
  }
}
