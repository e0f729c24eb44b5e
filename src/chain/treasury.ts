import { HDKey } from "@scure/bip32";
import { bytesToHex, type LocalAccount } from "viem";
import { privateKeyToAccount } from "viem/accounts";

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
