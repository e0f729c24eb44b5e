import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import { badInput } from "../errors.js";
import type { ResolveHost } from "./resolve-host.js";

const MAX_URL_LENGTH = 2048;

/** The eight 16-bit groups of an IPv6 address, or undefined when it is not one. */
function ipv6Groups(address: string): number[] | undefined {
  let canonical: string;
  try {
    // The WHATWG URL parser writes every IPv6 form (dotted tail, zeros, case) as compressed hex.
    canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return undefined;
  }
  const [head, tail] = canonical.split("::");
  const groups = (part: string | undefined) => (part ? part.split(":").map((group) => parseInt(group, 16)) : []);
  const [before, after] = [groups(head), groups(tail)];
  return [...before, ...Array<number>(8 - before.length - after.length).fill(0), ...after];
}

const ipv4Of = (high: number, low: number) => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;

/** The IPv4 address an IPv6 address carries to reach (IPv4-mapped or -compatible, NAT64 well-known prefix, 6to4). */
function embeddedIPv4(groups: number[]): string | undefined {
  const zeros = (from: number, to: number) => groups.slice(from, to).every((group) => group === 0);
  if (zeros(0, 5) && (groups[5] === 0xffff || groups[5] === 0)) return ipv4Of(groups[6], groups[7]); // ::ffff:a.b.c.d, ::a.b.c.d
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zeros(2, 6)) return ipv4Of(groups[6], groups[7]); // 64:ff9b::a.b.c.d
  if (groups[0] === 0x2002) return ipv4Of(groups[1], groups[2]); // 2002:aabb:ccdd::
  return undefined;
}

/**
 * True for an address no production webhook may reach: everything ipaddr.js does not class as
 * plain `unicast` (loopback, private, link-local, shared, multicast, reserved and documentation
 * ranges, benchmarking, NAT64 local-use, Teredo, ORCHID…). An IPv6 address that embeds an IPv4 is
 * judged by that IPv4.
 */
export function isNonPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return ipaddr.IPv4.parse(address).range() !== "unicast";
  const groups = family === 6 ? ipv6Groups(address) : undefined;
  if (!groups) return true;
  const ipv4 = embeddedIPv4(groups);
  if (ipv4) return isNonPublicAddress(ipv4);
  return new ipaddr.IPv6(groups).range() !== "unicast";
}

/** The host of a URL without the brackets of an IPv6 literal, nor the trailing dots of a fully qualified name (`localhost.` is localhost). */
export const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, "$1").replace(/\.+$/, "");

const NOT_PUBLIC = "url must point at a public address";

/**
 * An endpoint URL as given at registration: absolute, at most 2048 characters, without credentials.
 * Strict (unless WEBHOOK_ALLOW_PRIVATE_URLS): https only, and no name or address that is not public.
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
      throw badInput(NOT_PUBLIC);
    }
  }
  return url.toString();
}

/**
 * parseEndpointUrl, and when strict, a name that resolves to an address that is not public is
 * refused too (nothing is sent to it; every delivery checks its own resolution again). A name that
 * does not resolve yet is accepted: its deliveries fail with "connection failed" until it does.
 */
export async function admitEndpointUrl(raw: unknown, strict: boolean, resolveHost: ResolveHost): Promise<string> {
  const target = parseEndpointUrl(raw, strict);
  const host = hostOf(new URL(target));
  if (!strict || isIP(host)) return target;
  const addresses = await resolveHost(host).catch(() => []);
  if (addresses.some((entry) => isNonPublicAddress(entry.address))) throw badInput(NOT_PUBLIC);
  return target;
}
