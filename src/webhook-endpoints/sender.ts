import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP, type LookupFunction } from "node:net";
import type { ResolveHost } from "./resolve-host.js";
import { hostOf, isNonPublicAddress } from "./url-policy.js";

export type SendOptions = {
  resolveHost: ResolveHost;
  /** Unless WEBHOOK_ALLOW_PRIVATE_URLS: connect to public addresses only. */
  strict: boolean;
  timeoutMs: number;
};

/** The destination is (or resolves to) an address the policy refuses; nothing was sent. */
export class DestinationRefused extends Error {
  constructor() {
    super("the destination resolves to an address that is not public");
  }
}

/** Nothing but the status line and headers came back within the time-out. */
export class NoResponse extends Error {
  constructor(timeoutMs: number) {
    super(`no response within ${timeoutMs} ms`);
  }
}

/**
 * The socket's own name resolution: the name is resolved once, here, and the connection goes to
 * the addresses judged here. A check before the request and a second resolution by the HTTP
 * client would leave a DNS-rebinding window (public at the check, 127.0.0.1 at the connect).
 */
function checkedLookup({ resolveHost, strict }: SendOptions): LookupFunction {
  return (hostname, options, callback) => {
    resolveHost(hostname).then(
      (addresses) => {
        if (!addresses.length) return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), "", 0);
        if (strict && addresses.some((entry) => isNonPublicAddress(entry.address))) return callback(new DestinationRefused(), "", 0);
        if (options.all) return callback(null, addresses);
        const [first] = addresses.filter((entry) => !options.family || entry.family === options.family);
        if (!first) return callback(Object.assign(new Error(`${hostname} has no IPv${options.family} address`), { code: "ENOTFOUND" }), "", 0);
        callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, "", 0),
    );
  };
}

/**
 * POSTs a webhook and resolves to the HTTP status. Redirects are not followed and the response
 * body is not read. Rejects with DestinationRefused, NoResponse, or the connection's error.
 */
export function postWebhook(target: string, headers: Record<string, string>, body: string, options: SendOptions): Promise<number> {
  const url = new URL(target);
  // A literal address is never looked up: it is judged as it stands.
  if (options.strict && isIP(hostOf(url)) && isNonPublicAddress(hostOf(url))) return Promise.reject(new DestinationRefused());
  const request = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise<number>((resolve, reject) => {
    const outgoing = request(url, {
      method: "POST",
      // One connection per attempt: no pooled socket outlives the address check it was made under.
      agent: false,
      lookup: checkedLookup(options),
      headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
    });
    const timer = setTimeout(() => outgoing.destroy(new NoResponse(options.timeoutMs)), options.timeoutMs);
    outgoing.on("response", (response: IncomingMessage) => {
      clearTimeout(timer);
      response.destroy();
      resolve(response.statusCode ?? 0);
    });
    outgoing.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    outgoing.end(body);
  });
}
