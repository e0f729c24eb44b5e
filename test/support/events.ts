import { expect } from "vitest";
import type { Tenant, TestServer } from "./server.js";
import { createUser, rest } from "./http.js";
import { fund } from "./ledger.js";
import { NGN_ACCOUNT } from "./withdrawals.js";
import { patient } from "./patience.js";

export type FeedEvent = { id: string; type: string; createdAt: string; data: { object: Record<string, any> } };

/** Every event of the tenant's feed, oldest first, paging with the REST cursor. */
export async function allEvents(server: TestServer, tenant: Tenant, query = ""): Promise<FeedEvent[]> {
  const events: FeedEvent[] = [];
  for (let after = ""; ; ) {
    const res = await rest(server, "GET", `/v1/events?limit=100${after}${query}`, { headers: tenant.headers });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    events.push(...res.body.data);
    if (!res.body.hasMore) return events;
    after = `&after=${events.at(-1)!.id}`;
  }
}

/** Waits until `done` holds for the tenant's feed, or `timeoutMs` has passed, and returns the feed (the feed shows an event once older transactions have ended). */
export async function waitForFeed(server: TestServer, tenant: Tenant, done: (events: FeedEvent[]) => boolean, query = "", timeoutMs = 10_000): Promise<FeedEvent[]> {
  const deadline = Date.now() + patient(timeoutMs);
  for (;;) {
    const events = await allEvents(server, tenant, query);
    if (done(events) || Date.now() > deadline) return events;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Waits until the tenant's feed holds at least `count` events of the given types. */
export const waitForEvents = (server: TestServer, tenant: Tenant, count: number, query = "", timeoutMs = 10_000): Promise<FeedEvent[]> =>
  waitForFeed(server, tenant, (events) => events.length >= count, query, timeoutMs);

/**
 * Drives one user through every kind of activity that writes an event: a virtual account and a
 * completed fiat deposit (which converts to USDC), a failed on-chain deposit, a card debit, a
 * conversion, an NGN withdrawal completed (through PROCESSING) and one failed, an API key created and revoked.
 */
export async function everyKindOfActivity(server: TestServer, tenant: Tenant) {
  const ok = (res: { status: number; body: unknown }, status = 200) => {
    expect(res.status, JSON.stringify(res.body)).toBe(status);
    return res.body as Record<string, any>;
  };
  const call = (method: string, path: string, body?: unknown) => rest(server, method, path, { headers: tenant.headers, body });
  const userId = await createUser(server, tenant, { firstName: "Ada", lastName: "Lovelace", dob: "1990-05-17" });
  ok(await call("POST", "/v1/virtual-account/USD", { userId }));
  const fiat = ok(await call("POST", "/v1/sandbox/deposits", { userId, currency: "USD", amount: 250 }), 201);
  ok(await call("POST", `/v1/sandbox/deposits/${fiat.id}/complete`));
  const chain = ok(await call("POST", "/v1/sandbox/deposits", { userId, currency: "USDC", amount: 5 }), 201);
  ok(await call("POST", `/v1/sandbox/deposits/${chain.id}/fail`, { reason: "reorg" }));
  await fund(server, tenant.clientId, userId, "USD", "100");
  await fund(server, tenant.clientId, userId, "NGN", "20000");
  ok(await call("GET", `/v1/virtual-cards/${userId}`));
  ok(await call("POST", "/v1/sandbox/card-transactions", { userId, amount: 12.5, description: "Coffee" }));
  ok(await call("POST", "/v1/conversion", { userId, from: "USD", to: "EUR", amount: 10 }));
  const paid = ok(await call("POST", "/v1/withdrawals/ngn", { userId, amount: 5000, ...NGN_ACCOUNT }));
  ok(await call("POST", `/v1/sandbox/withdrawals/${paid.reference}/complete`));
  const refused = ok(await call("POST", "/v1/withdrawals/ngn", { userId, amount: 1000, ...NGN_ACCOUNT }));
  ok(await call("POST", `/v1/sandbox/withdrawals/${refused.reference}/fail`));
  const key = ok(await call("POST", "/v1/api-keys"));
  ok(await call("DELETE", `/v1/api-keys/${key.id}`));
  return { userId, fiatDepositId: fiat.id as string, chainDepositId: chain.id as string, withdrawalReference: paid.reference as string };
}

/** The types everyKindOfActivity writes, in order. */
export const ACTIVITY_EVENT_TYPES = [
  "user.created",
  "virtual_account.created",
  "deposit.created",
  "deposit.completed",
  "conversion.completed",
  "deposit.created",
  "deposit.failed",
  "card.transaction.created",
  "conversion.completed",
  "withdrawal.created",
  "withdrawal.processing",
  "withdrawal.completed",
  "withdrawal.created",
  "withdrawal.failed",
  "api_key.created",
  "api_key.revoked",
];
