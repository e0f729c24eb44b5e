import { MODE_HEADER } from "../modes.js";

/**
 * The two credential headers, as they arrive over HTTP or in a websocket `connection_init` payload, and
 * the mode a session names for its request (`x-mode`; an API key carries its own).
 */
export type Credentials = { apiKey?: string; jwt?: string; mode?: string };

type FetchHeaders = { get(name: string): string | null };
type HeaderBag = Record<string, unknown> | FetchHeaders | undefined | null;

// Fetch-style headers come from more than one implementation (yoga brings its own), so no instanceof.
const isFetchHeaders = (bag: object): bag is FetchHeaders => typeof (bag as FetchHeaders).get === "function";

function read(bag: HeaderBag, name: string): string | undefined {
  if (!bag) return undefined;
  const value = isFetchHeaders(bag) ? bag.get(name) : bag[name];
  if (Array.isArray(value)) return typeof value[0] === "string" ? value[0] : undefined;
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

export function credentialsFrom(bag: HeaderBag): Credentials {
  return { apiKey: read(bag, "x-api-key"), jwt: read(bag, "x-client-auth"), mode: read(bag, MODE_HEADER) };
}

/** graphql-ws clients put the headers either at the top of the payload or under `headers`. */
export function credentialsFromConnectionParams(params: Record<string, unknown> | undefined): Credentials {
  const nested = params?.headers;
  const fromNested = credentialsFrom(typeof nested === "object" ? (nested as Record<string, unknown>) : undefined);
  const fromTop = credentialsFrom(params);
  return { apiKey: fromTop.apiKey ?? fromNested.apiKey, jwt: fromTop.jwt ?? fromNested.jwt, mode: fromTop.mode ?? fromNested.mode };
}
