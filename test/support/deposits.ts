import { createHmac } from "node:crypto";
import { Decimal } from "decimal.js";
import { expect } from "vitest";
import type { Tenant, TestServer } from "./server.js";
import { rest } from "./http.js";

/** The contract's deposit record keys; the optional ones appear only on the deposits they describe. */
export const DEPOSIT_KEYS = ["id", "userId", "eventId", "amount", "status", "currency", "createdAt", "updatedAt", "livemode"];

/** Signs like a provider would: HMAC-SHA256 over the bytes of `${t}.` and the raw body, written here independently of the server's code. */
export function signature(secret: string, rawBody: string | Buffer, timestamp = Math.floor(Date.now() / 1000)) {
  return `t=${timestamp},v1=${createHmac("sha256", secret).update(`${timestamp}.`).update(rawBody).digest("hex")}`;
}

/** The secret a provider signs with when no WEBHOOK_SECRET_<PROVIDER> is set: HMAC-SHA256(WEBHOOK_SECRET, "webhook-provider:<name>") in hex. */
export function providerSecret(server: TestServer, provider: string) {
  return createHmac("sha256", server.app.services.config.webhookSecret).update(`webhook-provider:${provider}`).digest("hex");
}

export function postWebhook(server: TestServer, provider: string, event: unknown, options: { timestamp?: number; header?: string | null } = {}) {
  const rawBody = typeof event === "string" ? event : JSON.stringify(event);
  const header = options.header === undefined ? signature(providerSecret(server, provider), rawBody, options.timestamp) : options.header;
  return rest(server, "POST", `/v1/webhooks/${provider}`, { rawBody, headers: header === null ? {} : { "x-webhook-signature": header } });
}

/**
 * A fiat deposit as its provider reports it through the signed webhook (received, then completed): the
 * only way money enters live mode. Returns the deposit record.
 */
export async function providerDeposit(server: TestServer, tenant: Tenant, userId: string, currency: string, amount: string) {
  const account = await server.app.db.prisma.virtualAccount.findFirstOrThrow({ where: { userId, currency, clientId: tenant.clientId } });
  const reference = `prv_${crypto.randomUUID()}`;
  const data = { reference, accountNumber: account.accountNumber, amount, currency, ...(currency === "NGN" ? { paymentReference: "NIP0123456789AB" } : {}) };
  const received = await postWebhook(server, account.provider, { id: crypto.randomUUID(), type: "deposit.received", data });
  expect(received.status, JSON.stringify(received.body)).toBeLessThan(300);
  const completed = await postWebhook(server, account.provider, { id: crypto.randomUUID(), type: "deposit.completed", data: { reference } });
  expect(completed.status, JSON.stringify(completed.body)).toBeLessThan(300);
  return server.app.db.prisma.deposit.findFirstOrThrow({ where: { eventId: reference } });
}

export async function newVirtualAccount(server: TestServer, tenant: Tenant, userId: string, currency: string, body: Record<string, unknown> = {}) {
  const res = await rest(server, "POST", `/v1/virtual-account/${currency}`, { headers: tenant.headers, body: { userId, ...body } });
  expect(res.status).toBe(200);
  return res.body as { accountNumber: string; destinationAddress: string; destinationAsset: string };
}

export async function simulateDeposit(server: TestServer, tenant: Tenant, body: Record<string, unknown>) {
  const res = await rest(server, "POST", "/v1/sandbox/deposits", { headers: tenant.headers, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

/** The user's ledger entries, newest first, with exact amounts (GraphQL Decimal strings, normalised). */
export async function ledgerOf(server: TestServer, tenant: Tenant, userId: string) {
  const res = await rest(server, "POST", "/graphql", {
    headers: tenant.headers,
    body: { query: `query ($id: ID!) { user(id: $id) { ledgerPage(limit: 1000) { type currency amount referenceId } } }`, variables: { id: userId } },
  });
  expect(res.body.errors).toBeUndefined();
  return (res.body.data.user.ledgerPage as { type: string; currency: string; amount: string; referenceId: string | null }[]).map((entry) => ({
    ...entry,
    amount: new Decimal(entry.amount).toFixed(),
  }));
}

export async function depositsOf(server: TestServer, tenant: Tenant, userId: string, query = "") {
  const res = await rest(server, "GET", `/v1/transactions/deposits/${userId}${query}`, { headers: tenant.headers });
  expect(res.status).toBe(200);
  return res.body as Record<string, unknown>[];
}

/** Exact balances as strings, read over GraphQL (REST money is a JSON number). */
export async function balancesOf(server: TestServer, tenant: Tenant, userId: string): Promise<Record<string, string>> {
  const res = await rest(server, "POST", "/graphql", {
    headers: tenant.headers,
    body: { query: `query ($id: ID!) { user(id: $id) { balances { currency balance } } }`, variables: { id: userId } },
  });
  return Object.fromEntries(res.body.data.user.balances.map((b: { currency: string; balance: string }) => [b.currency, new Decimal(b.balance).toFixed()]));
}

export async function ledgerVerifies(server: TestServer, userId: string, clientId: string) {
  const report = await server.app.services.ledger.verify(clientId, userId);
  expect(report.chains.flatMap((c) => c.problems)).toEqual([]);
  expect(report.valid).toBe(true);
}

/** Units per US dollar in the sandbox FX table (the product's published sandbox rates). */
const USD_RATES: Record<string, string> = { USD: "1", USDC: "1", USDT: "1", DAI: "1", NGN: "1535.25", EUR: "0.9215", MXN: "18.4370", BRL: "5.4625" };
const DECIMALS: Record<string, number> = { NGN: 2, USD: 2, EUR: 2, MXN: 2, BRL: 2, USDC: 6, USDT: 6, DAI: 18 };
const Exact = Decimal.clone({ precision: 60 });

/**
 * What a deposit's auto-conversion must give, from the published terms: a 0.1% fee in the source
 * currency rounded down, the rest converted at mid × (1 − 0.5% spread) (rate kept to 18 decimals,
 * rounded down), the result rounded down to the target's decimals.
 */
export function expectedConversion(amount: string, from: string, to: string) {
  const fee = new Exact(amount).times("0.001").toDecimalPlaces(DECIMALS[from], Decimal.ROUND_DOWN);
  const mid = new Exact(USD_RATES[to]).div(USD_RATES[from]).toDecimalPlaces(18, Decimal.ROUND_HALF_EVEN);
  const rate = mid.times("0.995").toDecimalPlaces(18, Decimal.ROUND_DOWN);
  const converted = new Exact(amount).minus(fee).times(rate).toDecimalPlaces(DECIMALS[to], Decimal.ROUND_DOWN);
  return { fee: fee.toFixed(), sold: new Exact(amount).minus(fee).toFixed(), converted: converted.toFixed() };
}
