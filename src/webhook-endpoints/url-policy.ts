import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";
import { badInput } from "../errors.js";

const MAX_URL_LENGTH = 2048;

/** Loopback, private, link-local, shared, multicast and reserved ranges: never a webhook target in production. */
const NON_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["127.0.0.0", 8], ["169.254.0.0", 16], ["172.16.0.0", 12],
  ["192.0.0.0", 24], ["192.168.0.0", 16], ["198.18.0.0", 15], ["224.0.0.0", 4], ["240.0.0.0", 4],
] as const) NON_PUBLIC.addSubnet(network, prefix, "ipv4");
for (const [network, prefix] of [["::", 127], ["fc00::", 7], ["fe80::", 10], ["ff00::", 8], ["64:ff9b::", 96]] as const) {
  NON_PUBLIC.addSubnet(network, prefix, "ipv6");
}

/** True for an address no production webhook may reach (an IPv4-mapped IPv6 address is judged as its IPv4). */
export function isNonPublicAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return NON_PUBLIC.check(mapped[1], "ipv4");
  const family = isIP(address);
  if (family === 0) return true;
  return NON_PUBLIC.check(address, family === 4 ? "ipv4" : "ipv6");
}

const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, "$1");

/**
 * An endpoint URL as given at registration: absolute, at most 2048 characters, without credentials.
 * Strict (production without the sandbox): https only, and no name or address that is not public.
 */
export function parseEndpointUrl(raw: unknown, strict: boolean): string {
  if (typeof raw !== "string" || raw.length === 0 || raw.length > MAX_URL_LENGTH) throw badInput(`url must be an absolute URL of at most ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw badInput("url must be an absolute URL of at most 2048 characters");
  }
  const protocols = strict ? ["https:"] : ["https:", "http:"];
  if (!protocols.includes(url.protocol)) throw badInput(strict ? "url must use https" : "url must use https or http");
  if (url.username || url.password) throw badInput("url must not carry credentials");
  if (strict) {
    const host = hostOf(url).toLowerCase();
    if (host === "localhost" || host.endsWith(".localhost") || (isIP(host) && isNonPublicAddress(host))) {
      throw badInput("url must point at a public address");
    }
  }
  return url.toString();
}

/** At delivery time (strict mode): the name must resolve to public addresses only, whatever it resolved to when registered. */
export async function assertPublicDestination(target: string): Promise<void> {
  const host = hostOf(new URL(target));
  const addresses = isIP(host) ? [host] : (await lookup(host, { all: true })).map((entry) => entry.address);
  if (addresses.some(isNonPublicAddress)) throw new Error("the destination resolves to an address that is not public");
}
