import { HDKey } from "@scure/bip32";
import { bytesToHex, type Address, type LocalAccount } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { Sql } from "../db/sql.js";

/**
 * The custody scheme (BIP-44, coin type 60): everything the platform holds on every EVM network is
 * derived from CUSTODIAN_MASTER_KEY, so the master key alone recovers every fund.
 * - user deposit addresses: m/44'/60'/0'/0/{index}, the index from the custodian's database sequence;
 * - the treasury (hot wallet that sends and receives sweeps): m/44'/60'/1'/0/0, the same on every network.
 */
export const depositAddressPath = (index: number) => `m/44'/60'/0'/0/${index}`;
export const TREASURY_PATH = "m/44'/60'/1'/0/0";

/** The signing account at `path` of an xprv. Its key lives in memory only: never returned, logged or stored. */
export function accountAt(masterKey: string, path: string): LocalAccount {
  const child = HDKey.fromExtendedKey(masterKey).derive(path);
  if (!child.privateKey) throw new Error("the custodian master key must be an extended private key");
  return privateKeyToAccount(bytesToHex(child.privateKey));
}

export const treasuryAccount = (masterKey: string) => accountAt(masterKey, TREASURY_PATH);

const DERIVATION_INDEX = `SELECT "derivationIndex" FROM "sandbox_custodian_addresses" WHERE "address" = $1`;

/**
 * The keys that sign what the platform sends: the treasury's, and a deposit address's (for its
 * sweep), each derived from the master key when first needed and kept in memory only.
 */
export class Signers {
  readonly treasury: LocalAccount;
  private readonly accounts = new Map<string, LocalAccount>();

  constructor(private readonly masterKey: string) {
    this.treasury = treasuryAccount(masterKey);
    this.accounts.set(this.treasury.address, this.treasury);
  }

  async signerFor(sql: Sql, address: Address): Promise<LocalAccount> {
    const known = this.accounts.get(address);
    if (known) return known;
    const [row] = await sql.query<{ derivationIndex: number }>("custodian_derivation_index", DERIVATION_INDEX, [address]);
    if (!row) throw new Error(`${address} is not an address the custodian derived`);
    const account = accountAt(this.masterKey, depositAddressPath(row.derivationIndex));
    if (account.address !== address) throw new Error(`the master key does not derive ${address} at index ${row.derivationIndex}`);
    this.accounts.set(address, account);
    return account;
  }
}
