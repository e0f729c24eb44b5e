import { expect } from "vitest";
import { newTenant, type Tenant, type TestServer } from "./server.js";
import { createUser, rest } from "./http.js";
import { fund } from "./ledger.js";
import { HOLDER } from "./withdrawals.js";

/** The keys of a card authorization on REST, in order. */
export const AUTHORIZATION_KEYS = ["id", "userId", "cardId", "amount", "currency", "merchant", "status", "declineReason", "capturedAmount", "expiresAt", "createdAt", "updatedAt", "livemode"];

/** A fresh tenant's user (the test users' holder) with `usd` on the USD balance, and a card unless `card: false`. */
export async function cardholder(server: TestServer, usd: string, options: { card?: boolean } = {}): Promise<{ tenant: Tenant; userId: string }> {
  const tenant = await newTenant(server);
  const userId = await createUser(server, tenant, HOLDER);
  if (options.card !== false) expect((await rest(server, "GET", `/v1/virtual-cards/${userId}`, { headers: tenant.headers })).status).toBe(200);
  await fund(server, tenant.clientId, userId, "USD", usd);
  return { tenant, userId };
}

export const authorize = (server: TestServer, tenant: Tenant, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  rest(server, "POST", "/v1/sandbox/card-authorizations", { headers: { ...tenant.headers, ...headers }, body });

export const capture = (server: TestServer, tenant: Tenant, id: string, body: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  rest(server, "POST", `/v1/sandbox/card-authorizations/${id}/capture`, { headers: { ...tenant.headers, ...headers }, body });

export const reverse = (server: TestServer, tenant: Tenant, id: string) =>
  rest(server, "POST", `/v1/sandbox/card-authorizations/${id}/reverse`, { headers: tenant.headers });

/** The user's USD row of GET /v1/balances/{userId}, or undefined. */
export async function usdBalances(server: TestServer, tenant: Tenant, userId: string) {
  const res = await rest(server, "GET", `/v1/balances/${userId}`, { headers: tenant.headers });
  expect(res.status).toBe(200);
  const usd = (res.body.balances as { currency: string; posted: number; pending: number; available: number; livemode: boolean }[]).find((row) => row.currency === "USD");
  if (!usd) return usd;
  // The tenants here are test mode's; the row is compared without it.
  const { livemode, ...balances } = usd;
  expect(livemode).toBe(false);
  return balances;
}

