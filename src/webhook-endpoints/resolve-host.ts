import { lookup as dnsLookup } from "node:dns/promises";

/** Every address a name resolves to (the DNS is the external edge: tests pass their own). */
export type ResolveHost = (hostname: string) => Promise<{ address: string; family: number }[]>;

export const resolveWithDns: ResolveHost = (hostname) => dnsLookup(hostname, { all: true });
