import ipaddr from "ipaddr.js";
import { badInput } from "../errors.js";

/** The most entries a key's allowlist holds. */
export const MAX_ALLOWED_IPS = 20;

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/**
 * One allowlist entry, strictly: an IPv4 address in four decimal parts or an IPv6 address (no zone),
 * each optionally with a prefix length. A range must name its network (no host bits set), so a
 * typo such as `10.0.0.5/8` is refused rather than silently widened. An IPv4-mapped IPv6 entry is
 * kept as its IPv4 form, as the client addresses it is compared with are.
 */
function parseEntry(entry: string): Range | undefined {
  const [address, prefix, ...rest] = entry.split("/");
  if (rest.length > 0 || (prefix !== undefined && !/^\d{1,3}$/.test(prefix))) return undefined;
  let range: Range;
  if (ipaddr.IPv4.isValidFourPartDecimal(address)) {
    range = [ipaddr.IPv4.parse(address), prefix === undefined ? 32 : Number(prefix)];
    if (range[1] > 32) return undefined;
  } else if (ipaddr.IPv6.isValid(address) && !address.includes("%")) {
    const v6 = ipaddr.IPv6.parse(address);
    range = [v6, prefix === undefined ? 128 : Number(prefix)];
    if (range[1] > 128) return undefined;
    if (v6.isIPv4MappedAddress() && range[1] >= 96) range = [v6.toIPv4Address(), range[1] - 96];
  } else {
    return undefined;
  }
  return range;
}

const networkOf = ([address, bits]: Range) =>
  (address.kind() === "ipv4" ? ipaddr.IPv4.networkAddressFromCIDR(`${address}/${bits}`) : ipaddr.IPv6.networkAddressFromCIDR(`${address}/${bits}`)).toString();

const format = ([address, bits]: Range) => {
  const full = address.kind() === "ipv4" ? 32 : 128;
  const text = address.kind() === "ipv6" ? (address as ipaddr.IPv6).toRFC5952String() : address.toString();
  return bits === full ? text : `${text}/${bits}`;
};

/**
 * Checks a key's `allowedIps` as sent and returns it normalised (canonical text, duplicates dropped),
 * or [] when it was omitted or null (no restriction). Refusals name the entry.
 */
export function normaliseAllowedIps(entries: unknown): string[] {
  if (entries === undefined || entries === null) return [];
  if (!Array.isArray(entries)) throw badInput("allowedIps must be a list of IP addresses or CIDR ranges");
  if (entries.length === 0) throw badInput("allowedIps must list at least one address (omit it for a key usable from anywhere)");
  if (entries.length > MAX_ALLOWED_IPS) throw badInput(`allowedIps holds at most ${MAX_ALLOWED_IPS} entries`);
  const normalised = entries.map((entry, index) => {
    const range = typeof entry === "string" ? parseEntry(entry.trim()) : undefined;
    if (!range) throw badInput(`allowedIps[${index}]: ${JSON.stringify(entry)} is not an IPv4/IPv6 address or CIDR range`);
    const network = networkOf(range);
    if (network !== range[0].toString()) throw badInput(`allowedIps[${index}]: ${JSON.stringify(entry)} has host bits set (the range's network is ${network}/${range[1]})`);
    return format(range);
  });
  return [...new Set(normalised)];
}

const storedRange = (entry: string): Range => {
  const range = parseEntry(entry);
  if (!range) throw new Error(`A stored allowlist entry does not parse: ${entry}`);
  return range;
};

/** A key's allowlist, parsed once when the key is verified (the cached credential carries it). */
export class AddressAllowlist {
  private readonly ranges: Range[];

  /** `entries` as stored: normalised by normaliseAllowedIps. */
  constructor(readonly entries: readonly string[]) {
    this.ranges = entries.map(storedRange);
  }

  /** Whether every range of another (normalised) allowlist lies inside one of these ranges: it allows no address this one refuses. */
  covers(entries: readonly string[]): boolean {
    return entries.map(storedRange).every(([address, bits]) =>
      this.ranges.some((range) => range[0].kind() === address.kind() && bits >= range[1] && address.match(range)));
  }

  /** Whether a client address (as TRUST_PROXY reads it; IPv4-mapped IPv6 counts as its IPv4 form) is in a range. */
  allows(clientAddress: string): boolean {
    if (!ipaddr.isValid(clientAddress)) return false;
    const address = ipaddr.process(clientAddress);
    return this.ranges.some((range) => range[0].kind() === address.kind() && address.match(range));
  }
}
