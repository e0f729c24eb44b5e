import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { credentialsFrom, credentialsFromConnectionParams, type Credentials } from "./credentials.js";

/** How an operation reached the server. Every transport runs the same pipeline; a few rules differ by transport. */
export type Transport = "graphql-http" | "rest" | "websocket";

/** What the pipeline needs to know about who sent an operation, whatever the transport. */
export type RequestInfo = {
  transport: Transport;
  credentials: Credentials;
  /** The caller's address, as the configured TRUST_PROXY allows it to be read. */
  ip: string;
  requestId: string;
  /**
   * The Idempotency-Key header (HTTP), or `extensions.idempotencyKey` of a websocket operation, as
   * sent: anything but a well-formed string is refused by the idempotency rule, never ignored.
   */
  idempotencyKey?: unknown;
  /**
   * REST only: the first query parameter or body field the route does not take, as sent. The
   * pipeline refuses it once the caller is admitted (src/pipeline/rest-unknown-parameters.ts).
   */
  unknownParameter?: string;
  /** Set once admission has authenticated the caller (for the access log). */
  clientId?: string;
};

/** The initial context each transport hands to yoga's enveloped pipeline. */
export type TransportContext = { requestInfo: RequestInfo; req?: IncomingMessage };

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A well-formed incoming `x-request-id` is kept (so a caller's or a proxy's id follows the request); otherwise one is made. */
export function requestIdOf(req: IncomingMessage): string {
  const incoming = req.headers["x-request-id"];
  return typeof incoming === "string" && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

/** The request's id and address, as the HTTP edge established them (`observeExchange`, TRUST_PROXY). */
export type HttpEdge = { requestId: string; ip: string };

export function httpRequestInfo(req: IncomingMessage, transport: "graphql-http" | "rest", { requestId, ip }: HttpEdge): RequestInfo {
  return {
    transport,
    credentials: credentialsFrom(req.headers),
    ip,
    requestId,
    idempotencyKey: req.headers["idempotency-key"],
  };
}

export function websocketRequestInfo(options: {
  connectionParams: Record<string, unknown> | undefined;
  ip: string;
  requestId: string;
  extensions: Record<string, unknown> | undefined;
}): RequestInfo {
  return {
    transport: "websocket",
    credentials: credentialsFromConnectionParams(options.connectionParams),
    ip: options.ip,
    requestId: options.requestId,
    idempotencyKey: options.extensions?.idempotencyKey,
  };
}
