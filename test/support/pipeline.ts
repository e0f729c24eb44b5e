import { randomUUID } from "node:crypto";
import { SignJWT } from "jose";
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import { expect } from "vitest";
import type { HttpResult } from "./http.js";
import type { TestServer } from "./server.js";

/** The bodies GraphQL over HTTP POST accepts: each must go through the same pipeline. */
export const GRAPHQL_ENCODINGS = ["json", "graphql", "form"] as const;
export type GraphqlEncoding = (typeof GRAPHQL_ENCODINGS)[number];

export type GraphqlResult = { data?: any; errors?: { message: string; extensions?: { code?: string } }[] };

/**
 * One GraphQL operation over HTTP POST, as JSON, as `application/graphql` (the document alone: no
 * variables, so documents used with it carry their values inline) or as a form.
 */
export async function postGraphql(
  server: TestServer,
  encoding: GraphqlEncoding,
  query: string,
  options: { variables?: Record<string, unknown>; headers?: Record<string, string> } = {},
): Promise<HttpResult<GraphqlResult>> {
  const { variables = {}, headers = {} } = options;
  if (encoding === "graphql" && Object.keys(variables).length > 0) throw new Error("application/graphql bodies carry no variables");
  const body = {
    json: () => JSON.stringify({ query, variables }),
    graphql: () => query,
    form: () => new URLSearchParams({ query, variables: JSON.stringify(variables) }).toString(),
  }[encoding]();
  const contentType = { json: "application/json", graphql: "application/graphql", form: "application/x-www-form-urlencoded" }[encoding];
  const response = await fetch(`${server.url}/graphql`, {
    method: "POST",
    headers: { "content-type": contentType, accept: "application/graphql-response+json", ...headers },
    body,
  });
  const text = await response.text();
  return { status: response.status, body: parseOrText(text), headers: response.headers };
}

function parseOrText(text: string): any {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return { text };
  }
}

/** A REST error body: the contract's `{error}` message (the server may add its own fields beside it, such as a code). */
export function expectRestError(body: Record<string, unknown>) {
  expect(typeof body.error, JSON.stringify(body)).toBe("string");
  expect(body.errors).toBeUndefined();
}

export const codesOf = (result: GraphqlResult | undefined) => (result?.errors ?? []).map((error) => error.extensions?.code);

export const wsUrl = (server: TestServer) => `${server.url.replace(/^http/, "ws")}/graphql`;

/** A graphql-ws connection that runs single operations and reports how the server closed it. */
export type WsConnection = {
  /** One operation to its end: every result it produced (one for queries and mutations). */
  run(payload: { query: string; variables?: Record<string, unknown>; extensions?: Record<string, unknown> }): Promise<GraphqlResult[]>;
  /** Resolves with the close code once the server closes the connection. */
  readonly closed: Promise<number>;
  /** The same close, with its reason. */
  readonly closedWith: Promise<{ code: number; reason: string }>;
  client: Client;
  dispose(): Promise<void>;
};

export function connectWs(
  server: TestServer,
  connectionParams: Record<string, unknown>,
  options: { headers?: Record<string, string> } = {},
): WsConnection {
  let onClosed: (close: { code: number; reason: string }) => void = () => {};
  const closedWith = new Promise<{ code: number; reason: string }>((resolve) => (onClosed = resolve));
  const headers = options.headers;
  class WithHeaders extends WebSocket {
    constructor(address: string, protocols?: string | string[]) {
      super(address, protocols, { headers });
    }
  }
  const client = createClient({
    url: wsUrl(server),
    webSocketImpl: headers ? WithHeaders : WebSocket,
    connectionParams,
    retryAttempts: 0,
    lazy: false,
    on: { closed: (event) => onClosed({ code: (event as { code: number }).code, reason: String((event as { reason?: unknown }).reason ?? "") }) },
    onNonLazyError: () => {},
  });
  return {
    client,
    closed: closedWith.then(({ code }) => code),
    closedWith,
    run: (payload) =>
      new Promise((resolve, reject) => {
        const results: GraphqlResult[] = [];
        client.subscribe(payload, {
          next: (result) => results.push(result as GraphqlResult),
          error: (error) => (Array.isArray(error) ? resolve([{ errors: error }]) : reject(error)),
          complete: () => resolve(results),
        });
      }),
    dispose: () => Promise.resolve(client.dispose()),
  };
}

export const secondsFromNow = (offset: number) => Math.floor(Date.now() / 1000) + offset;

/** A JWT for a real session row, signed with the server's secret; the session and the token can be given their own ends. */
export async function craftSessionToken(
  server: TestServer,
  clientId: string,
  options: { exp?: number; sessionExpiresAt?: Date } = {},
): Promise<string> {
  const sessionId = randomUUID();
  await server.app.db.prisma.session.create({
    data: { id: sessionId, clientId, expiresAt: options.sessionExpiresAt ?? new Date(Date.now() + 3600_000) },
  });
  return new SignJWT({})
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(clientId)
    .setJti(sessionId)
    .setIssuedAt(secondsFromNow(-60))
    .setExpirationTime(options.exp ?? secondsFromNow(3600))
    .sign(new TextEncoder().encode(server.app.services.config.jwtSecret));
}

/** Every row of every table of the public schema, as JSON text: what an attacker with a database dump would read. */
export async function dumpDatabase(server: TestServer): Promise<string> {
  const { prisma } = server.app.db;
  const tables = await prisma.$queryRawUnsafe<{ table_name: string }[]>(
    `SELECT table_name::text AS table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
  );
  const rows: string[] = [];
  for (const { table_name: table } of tables) {
    const found = await prisma.$queryRawUnsafe<{ row: string }[]>(`SELECT row_to_json(t)::text AS row FROM "${table.replaceAll('"', '""')}" t`);
    rows.push(...found.map((r) => `${table}: ${r.row}`));
  }
  return rows.join("\n");
}
