import { getAddress, zeroAddress, type Address } from "viem";
import type { Mode } from "../modes.js";
import type { Sql } from "../db/sql.js";
import { AppError } from "../errors.js";
import type { NetworkSettings } from "./networks.js";

/** Every custodial address the platform derived (either mode), and the user whose wallet it is when it is one. */
const CUSTODIAL = `
  SELECT w."userId" FROM "sandbox_custodian_addresses" c LEFT JOIN "wallets" w ON w."address" = c."address" WHERE c."address" = $1
  UNION ALL
  SELECT w."userId" FROM "wallets" w WHERE w."address" = $1`;

/**
 * Where money may not be sent out of the platform, whatever the route (a withdrawal, a virtual
 * account's forward): the zero address (tokens burned); a token contract of any network configured in
 * either mode (tokens stuck); a treasury of either mode (the user debited, the platform keeping the
 * money); a custodial address of either mode, any client's (a transfer that only goes round the
 * platform, paying gas twice: the watcher credits it as a deposit, then it is swept back). Each is a
 * 400 naming the field, before anything is debited or created. The custodial lookup reads the stored
 * address tables (their unique indexes), so an address derived a moment ago on another instance counts.
 */
export class Destinations {
  private readonly reserved = new Map<Address, string>();

  private readonly sql: Sql;

  constructor(deps: { sql: Sql; networks: readonly NetworkSettings[]; treasuries: Record<Mode, Address> }) {
    this.sql = deps.sql;
    this.reserved.set(zeroAddress, "the zero address: tokens sent there are burned");
    for (const [mode, treasury] of Object.entries(deps.treasuries)) this.reserved.set(getAddress(treasury), `the platform's ${mode} treasury`);
    for (const network of deps.networks) {
      for (const [symbol, contract] of Object.entries(network.tokens)) {
        if (contract) this.reserved.set(getAddress(contract), `the ${symbol} contract on ${network.name}: tokens sent to a token contract are stuck there`);
      }
    }
  }

  /**
   * Refuses `address` as a destination (400 naming `field`). `ownerUserId`: the user whose own
   * custodial wallet is allowed (a virtual account forwarding into the user's own wallet sends
   * nothing: the money stays in the balance); a withdrawal allows none.
   */
  async assertOutside(address: Address, field: string, ownerUserId?: string): Promise<void> {
    const checksummed = getAddress(address);
    const reserved = this.reserved.get(checksummed);
    if (reserved) throw refused(field, `${field} is ${reserved}`);
    const holders = await this.sql.query<{ userId: string | null }>("destination_custodial", CUSTODIAL, [checksummed]);
    if (holders.length > 0 && !holders.every((holder) => ownerUserId !== undefined && holder.userId === ownerUserId)) {
      throw refused(field, `${field} is a deposit address of this platform: money between its users does not go out on a chain`);
    }
  }
}

const refused = (field: string, message: string) => new AppError("BAD_USER_INPUT", message, { param: field });
