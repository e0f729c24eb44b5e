import { HDKey } from "@scure/bip32";
import { bytesToHex, type Address, type LocalAccount } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { Mode } from "../modes.js";
import type { Sql } from "../db/sql.js";

/**
 * The custody scheme (BIP-44, coin type 60): everything the platform holds on every EVM network is
 * derived from CUSTODIAN_MASTER_KEY, so the master key alone recovers every fund. Each mode has
 * accounts of its own (SPEC §15), so no key of one mode ever signs for the other:
 * - live deposit addresses m/44'/60'/0'/0/{index}, test ones m/44'/60'/2'/0/{index}, the index from
 *   the custodian's database sequence (shared, so no index is used twice);
 * - the live treasury (hot wallet that sends and receives sweeps) m/44'/60'/1'/0/0, the test treasury
 *   m/44'/60'/3'/0/0, each the same address on every network.
 */
export const DEPOSIT_ACCOUNT: Record<Mode, number> = { live: 0, test: 2 };
export const depositAddressPath = (index: number, account = DEPOSIT_ACCOUNT.live) => `m/44'/60'/${account}'/0/${index}`;
export const TREASURY_PATHS: Record<Mode, string> = { live: "m/44'/60'/1'/0/0", test: "m/44'/60'/3'/0/0" };
export const TREASURY_PATH = TREASURY_PATHS.live;

/** The signing account at `path` of an xprv. Its key lives in memory only: never returned, logged or stored. */
export function accountAt(masterKey: string, path: string): LocalAccount {
  const child = HDKey.fromExtendedKey(masterKey).derive(path);
  if (!child.privateKey) throw new Error("the custodian master key must be an extended private key");
  return privateKeyToAccount(bytesToHex(child.privateKey));
}

export const treasuryAccount = (masterKey: string, mode: Mode = "live") => accountAt(masterKey, TREASURY_PATHS[mode]);

const DERIVATION = `SELECT "derivationIndex", "account" FROM "sandbox_custodian_addresses" WHERE "address" = $1`;

/**
 * The keys that sign what the platform sends: the treasury's, and a deposit address's (for its
 * sweep), each derived from the master key when first needed and kept in memory only.
 */
export class Signers {
  /** Each mode's treasury. */
  readonly treasury: Record<Mode, LocalAccount>;
  private readonly accounts = new Map<string, LocalAccount>();

  constructor(private readonly masterKey: string) {
    this.treasury = { live: treasuryAccount(masterKey, "live"), test: treasuryAccount(masterKey, "test") };
    for (const account of Object.values(this.treasury)) this.accounts.set(account.address, account);
  }

  async signerFor(sql: Sql, address: Address): Promise<LocalAccount> {
    const known = this.accounts.get(address);
    if (known) return known;
    const [row] = await sql.query<{ derivationIndex: number; account: number }>("custodian_derivation", DERIVATION, [address]);
    if (!row) throw new Error(`${address} is not an address the custodian derived`);
    const account = accountAt(this.masterKey, depositAddressPath(row.derivationIndex, row.account));
    if (account.address !== address) throw new Error(`the master key does not derive ${address} at index ${row.derivationIndex}`);
    this.accounts.set(address, account);
    return account;
  }
}
