import type { IncomingMessage, Server } from "node:http";
import { randomUUID } from "node:crypto";
import { GraphQLError, type ExecutionArgs } from "graphql";
import { WebSocketServer, type WebSocket } from "ws";
import { CloseCode } from "graphql-ws";
import { useServer } from "graphql-ws/use/ws";
import { credentialsFromConnectionParams } from "../caller/credentials.js";
import { AppError } from "../errors.js";
import { CREDENTIAL_ENDED_MESSAGES, type CredentialWatch } from "../auth/credential-watch.js";
import { authenticateWithinBudget } from "../pipeline/auth-failures.js";
import type { OpenStreams } from "../pipeline/open-streams.js";
import type { RateLimits } from "../pipeline/rate-limits.js";
import { websocketRequestInfo } from "../caller/request-info.js";
import { exactNumberReplacer, withExactNumbers } from "../graphql/exact-numbers.js";
import { withExponentsAsText } from "../exact-json.js";
import type { Logger } from "../logger.js";
import type { Services } from "../graphql/context.js";
import type { Yoga } from "./yoga.js";

/** Frames above this are refused before they are read (before authentication too). */
export const MAX_FRAME_BYTES = 100 * 1024;
/** Close code for a connection whose credential was revoked, logged out or expired. */
export const CREDENTIAL_ENDED = CloseCode.Unauthorized;
/** Close code for a connection over its caller's connection cap, or a connection_init over its address's rate limit. */
export const TOO_MANY_CONNECTIONS = 4429;
/**
 * Close code for a `connection_init` that failed for a reason of the server's (the database down,
 * say), not the caller's: 1013 "Try Again Later" (RFC 6455's registry). graphql-ws's own client
 * reconnects on it, whereas it gives up on 4500 and on 1011 (its client.js treats both as fatal);
 * 4403 stays for real refusals of the credential, which retrying does not change.
 */
export const TRY_AGAIN_LATER = 1013;
/** Refusals of the caller's credential: closed 4403 (UNAUTHENTICATED, FORBIDDEN) or 4429 (RATE_LIMITED). */
const REFUSED_CREDENTIAL = new Set(["UNAUTHENTICATED", "FORBIDDEN", "RATE_LIMITED"]);

export type WebSocketLimits = { subscriptionsPerConnection: number };

type EnvelopedRoot = {
  execute: (args: ExecutionArgs) => unknown;
  subscribe: (args: ExecutionArgs) => unknown;
};

type ConnectionExtra = {
  request: IncomingMessage;
  socket: WebSocket;
  /** Set when the connection is accepted. */
  ip?: string;
  stopWatching?: () => void;
  release?: () => void;
};

/**
 * graphql-ws (protocol graphql-transport-ws) on the HTTP server's /graphql path. Every operation goes
 * through yoga's envelop, so it gets the same admission (credential, rate limits), text rule, cost
 * limit, idempotency and error masking as HTTP. Credentials go in the `connection_init` payload; a
 * connection without valid ones is closed (4403), and one whose credential ends is closed (4401); a
 * `connection_init` the server could not check (the database down) is closed 1013, to be retried.
 * Each `connection_init` draws on its address's rate limit before its credential is looked up, as
 * every HTTP request does: an address over it is closed (4429) without a lookup. A failed credential
 * draws on the address's failed-authentication budget, shared with HTTP; an address past it is closed
 * 4429 too, whatever credential it sends, until the window ends.
 */
export function attachWebSocketServer(
  httpServer: Server,
  yoga: Yoga,
  deps: {
    services: Services;
    watch: CredentialWatch;
    limits: WebSocketLimits;
    streams: OpenStreams;
    rateLimits: RateLimits;
    clientIp: (request: IncomingMessage) => string;
    logger: Logger;
  },
) {
  const wsServer = new WebSocketServer({
    server: httpServer,
    path: yoga.graphqlEndpoint,
    maxPayload: MAX_FRAME_BYTES,
    verifyClient: ({ req }, accept) => {
      const allowed = deps.streams.hasRoomForIp(deps.clientIp(req));
      accept(allowed, allowed ? undefined : 429, allowed ? undefined : "Too many connections from this address");
    },
  });
  wsServer.on("connection", (socket, request) => {
    const ip = deps.clientIp(request);
    socket.once("close", deps.streams.openForIp(ip));
    // Every message graphql-ws sends passes here: an event's money goes out with every digit (exactNumberReplacer).
    const send = socket.send.bind(socket);
    socket.send = ((data: unknown, ...rest: unknown[]) => (send as (...args: unknown[]) => void)(typeof data === "string" ? withExactNumbers(data) : data, ...rest)) as typeof socket.send;
    // And every message it receives: a number written with an exponent is refused as on HTTP (withExponentsAsText).
    const emit = socket.emit.bind(socket);
    socket.emit = ((event: string | symbol, ...args: unknown[]) =>
      event === "message" && args.length > 0 && !args[1] ? emit(event, withExponentsAsText(String(args[0])), ...args.slice(1)) : emit(event, ...args)) as typeof socket.emit;
  });

  const disposable = useServer<Record<string, unknown> | undefined, ConnectionExtra>(
    {
      jsonMessageReplacer: exactNumberReplacer,
      execute: (args) => (args.rootValue as EnvelopedRoot).execute(args) as never,
      subscribe: (args) => (args.rootValue as EnvelopedRoot).subscribe(args) as never,
      onConnect: async (ctx) => {
        const extra = ctx.extra;
        const ip = deps.clientIp(extra.request);
        extra.ip = ip;
        try {
          await deps.rateLimits.ip(ip);
        } catch (error) {
          if (!(error instanceof AppError && error.code === "RATE_LIMITED")) throw error;
          extra.socket.close(TOO_MANY_CONNECTIONS, error.message);
          return false;
        }
        let credential;
        try {
          credential = await authenticateWithinBudget(deps.rateLimits, ip, () => deps.services.auth.authenticate(credentialsFromConnectionParams(ctx.connectionParams), ip));
        } catch (error) {
          if (!(error instanceof AppError && REFUSED_CREDENTIAL.has(error.code))) {
            deps.logger.error({ err: error }, "websocket connection_init failed; closed 1013 (try again later)");
            extra.socket.close(TRY_AGAIN_LATER, "The server could not check the credential; try again later");
            return false;
          }
          // Refused: over the failed-authentication budget (4429), or the credential's own refusal (4403: missing, unknown, revoked, expired, another address).
          extra.socket.close(error.code === "RATE_LIMITED" ? TOO_MANY_CONNECTIONS : CloseCode.Forbidden, closeReason(error.message));
          return false;
        }
        // Closed while its credential was checked: onClose has already run, so nothing may be registered now.
        if (extra.socket.readyState !== extra.socket.OPEN) return false;
        if (!deps.streams.hasRoomForClient(credential.clientId)) {
          extra.socket.close(TOO_MANY_CONNECTIONS, "Too many connections for this client");
          return false;
        }
        extra.release = deps.streams.openForClient(credential.clientId);
        extra.stopWatching = deps.watch.watch(credential, (how) => extra.socket.close(CREDENTIAL_ENDED, CREDENTIAL_ENDED_MESSAGES[how]));
        return true;
      },
      onNext: (_ctx, _id, _payload, _args, result) => withoutHttpExtensions(result),
      onClose: (ctx) => {
        ctx.extra.stopWatching?.();
        ctx.extra.release?.();
      },
      onSubscribe: async (ctx, _id, params) => {
        if (Object.keys(ctx.subscriptions).length > deps.limits.subscriptionsPerConnection) {
          return [new GraphQLError(`At most ${deps.limits.subscriptionsPerConnection} operations at once on one connection`, { extensions: { code: "RATE_LIMITED" } })];
        }
        const requestInfo = websocketRequestInfo({
          connectionParams: ctx.connectionParams,
          ip: ctx.extra.ip ?? "unknown",
          requestId: randomUUID(),
          extensions: params.extensions ?? undefined,
        });
        const { schema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({ requestInfo, req: ctx.extra.request, params });
        let document;
        try {
          document = parse(params.query);
        } catch (error) {
          return [error instanceof GraphQLError ? error : new GraphQLError("Syntax error")];
        }
        const args = {
          schema,
          operationName: params.operationName,
          document,
          variableValues: params.variables,
          contextValue: await contextFactory(),
          rootValue: { execute, subscribe },
        };
        const errors = validate(args.schema, args.document);
        return errors.length ? errors.map(withoutHttp) : args;
      },
    },
    wsServer,
  );
  // graphql-ws answers a socket error (a frame over the limit, say) with a stack trace on the console;
  // any client can cause one, so it is said once in the log instead (ws has already closed the socket).
  wsServer.on("connection", (socket) => {
    socket.removeAllListeners("error");
    socket.on("error", (err) => {
      deps.logger.warn({ err: err.message }, "websocket error; connection closed");
      socket.terminate();
    });
  });
  return {
    async close() {
      await disposable.dispose();
      await new Promise<void>((resolve) => wsServer.close(() => resolve()));
    },
  };
}

/** A close frame's reason holds at most 123 bytes of UTF-8. */
function closeReason(text: string): string {
  const bytes = Buffer.from(text);
  return bytes.length <= 123 ? text : `${bytes.subarray(0, 120).toString().replace(/\uFFFD$/, "")}…`;
}

/** `extensions.http` tells yoga an HTTP status; a websocket has none to set, so it is not sent. */
function withoutHttp(error: GraphQLError): GraphQLError {
  if (!error.extensions?.http) return error;
  const { http: _http, ...extensions } = error.extensions;
  return new GraphQLError(error.message, { nodes: error.nodes, source: error.source, positions: error.positions, path: error.path, extensions });
}

function withoutHttpExtensions<T extends { errors?: readonly GraphQLError[] }>(result: T): T {
  return result.errors?.some((error) => error.extensions?.http) ? { ...result, errors: result.errors.map(withoutHttp) } : result;
}
