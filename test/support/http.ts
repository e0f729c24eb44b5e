import { expect } from "vitest";
import type { Tenant, TestServer } from "./server.js";

export type HttpResult<T = any> = { status: number; body: T; headers: Headers };

/** One REST call: JSON in, JSON out. */
export async function rest<T = any>(
  server: TestServer,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: unknown; rawBody?: string } = {},
): Promise<HttpResult<T>> {
  const hasBody = options.body !== undefined || options.rawBody !== undefined;
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { ...(hasBody ? { "content-type": "application/json" } : {}), ...options.headers },
    body: options.rawBody ?? (options.body !== undefined ? JSON.stringify(options.body) : undefined),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
}

/** One GraphQL operation over HTTP POST. */
export async function gql<T = any>(
  server: TestServer,
  query: string,
  variables: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<HttpResult<{ data?: T; errors?: { message: string; extensions?: { code?: string } }[] }>> {
  return rest(server, "POST", "/graphql", { headers: { accept: "application/graphql-response+json", ...headers }, body: { query, variables } });
}

/** The codes of a GraphQL response's errors, for compact assertions. */
export const errorCodes = (result: HttpResult<{ errors?: { extensions?: { code?: string } }[] }>) =>
  (result.body.errors ?? []).map((e) => e.extensions?.code);

/** A user payload that passes validation; override what a test is about. */
export function userInput(overrides: Record<string, unknown> = {}) {
  return {
    email: `user-${crypto.randomUUID()}@example.com`,
    firstName: "Ada",
    lastName: "Lovelace",
    phoneNumber: "+14155552671",
    dob: "1990-05-17",
    ...overrides,
  };
}

/** A user of the tenant, created over REST as a test's set-up (anything but a 201 fails the test); returns its id. */
export async function createUser(server: TestServer, tenant: Pick<Tenant, "headers">, overrides: Record<string, unknown> = {}): Promise<string> {
  const res = await rest(server, "POST", "/v1/user", { headers: tenant.headers, body: userInput(overrides) });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

/** How many results had each HTTP status, for assertions about parallel requests. */
export const statusCounts = (results: { status: number }[]) =>
  results.reduce<Record<number, number>>((counts, r) => ({ ...counts, [r.status]: (counts[r.status] ?? 0) + 1 }), {});

/** A REST error body's keys as the contract has them (`code`, `param` and `requestId`, ours, stand beside them). */
export const contractKeys = (body: Record<string, unknown>) => Object.keys(body).filter((key) => key !== "code" && key !== "requestId" && key !== "param");

/** A REST error body without our `code`, `param` and `requestId`: what the contract shows. */
export const contractBody = (body: Record<string, unknown>) => Object.fromEntries(Object.entries(body).filter(([key]) => key !== "code" && key !== "requestId" && key !== "param"));
