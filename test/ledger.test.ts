import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, newTenant, type TestServer } from "./support/server.js";
import { createUser, errorCodes, gql, rest, contractKeys, contractBody } from "./support/http.js";
import { Decimal } from "decimal.js";
import type { JournalInput } from "../src/ledger/types.js";
import { expectLedgerInvariants, fund } from "./support/ledger.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

const ENTRY_KEYS = ["id", "userId", "type", "currency", "amount", "balanceBefore", "balanceAfter", "referenceId", "createdAt", "livemode"];

/** A tenant with a user who received 100 USD and converted 40 USD to EUR: four user entries. */
async function userWithHistory() {
  const tenant = await newTenant(server);
  const userId = await createUser(server, tenant);
  await fund(server, tenant.clientId, userId, "USD", "100");
  const conversion = await rest(server, "POST", "/v1/conversion", { headers: tenant.headers, body: { userId, from: "USD", to: "EUR", amount: 40 } });
  expect(conversion.status).toBe(200);
  return { tenant, userId, conversion: conversion.body };
}

describe("GET /v1/transactions/ledger/{userId}", () => {
  it("lists the user's entries newest first with the contract's fields and JSON numbers", async () => {
    const { tenant, userId, conversion } = await userWithHistory();
    const res = await rest(server, "GET", `/v1/transactions/ledger/${userId}`, { headers: tenant.headers });
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(4);
    for (const entry of res.body) expect(Object.keys(entry)).toEqual(ENTRY_KEYS);
    const deposit = res.body.at(-1);
    expect(deposit).toMatchObject({ userId, type: "DEPOSIT", currency: "USD", amount: 100, balanceBefore: 0, balanceAfter: 100, referenceId: null });
    expect(deposit.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const conversionEntries = res.body.slice(0, 3);
    expect(conversionEntries.map((e: { type: string }) => e.type).sort()).toEqual(["CONVERSION_IN", "CONVERSION_OUT", "FEE"]);
    for (const entry of conversionEntries) expect(entry.referenceId).toBe(conversion.id);
    expect(conversionEntries.find((e: { type: string }) => e.type === "CONVERSION_IN")).toMatchObject({
      currency: "EUR",
      amount: conversion.convertedAmount,
      balanceBefore: 0,
      balanceAfter: conversion.convertedAmount,
    });
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it("pages with page and limit", async () => {
    const { tenant, userId } = await userWithHistory();
    const all = (await rest(server, "GET", `/v1/transactions/ledger/${userId}`, { headers: tenant.headers })).body;
    const second = await rest(server, "GET", `/v1/transactions/ledger/${userId}?page=2&limit=3`, { headers: tenant.headers });
    expect(second.status).toBe(200);
    expect(second.body).toEqual(all.slice(3));
    const past = await rest(server, "GET", `/v1/transactions/ledger/${userId}?page=9&limit=3`, { headers: tenant.headers });
    expect(past.body).toEqual([]);
  });

  it("answers an empty array for a user without money", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const res = await rest(server, "GET", `/v1/transactions/ledger/${userId}`, { headers: tenant.headers });
    expect(res).toMatchObject({ status: 200, body: [] });
  });

  it.each([["page=0"], ["page=abc"], ["limit=0"], ["limit=1001"], ["limit=2.5"]])("refuses %s with 400", async (query) => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const res = await rest(server, "GET", `/v1/transactions/ledger/${userId}?${query}`, { headers: tenant.headers });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/page|limit/);
  });

  it("answers 404 for an unknown user and for another client's user, 400 for a non-UUID", async () => {
    const { userId } = await userWithHistory();
    const stranger = await newTenant(server);
    const other = await rest(server, "GET", `/v1/transactions/ledger/${userId}`, { headers: stranger.headers });
    const unknown = await rest(server, "GET", `/v1/transactions/ledger/${crypto.randomUUID()}`, { headers: stranger.headers });
    expect(other.status).toBe(404);
    expect(contractBody(other.body)).toEqual(contractBody(unknown.body));
    expect(contractKeys(other.body)).toEqual(["error"]);
    const malformed = await rest(server, "GET", "/v1/transactions/ledger/not-a-uuid", { headers: stranger.headers });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error).toMatch(/userId/);
  });

  it("requires credentials", async () => {
    const res = await rest(server, "GET", `/v1/transactions/ledger/${crypto.randomUUID()}`);
    expect(res.status).toBe(401);
  });
});

describe("GET /v1/transactions", () => {
  it("lists the client's user entries with paging totals, and nothing of other clients", async () => {
    const { tenant, userId } = await userWithHistory();
    await userWithHistory(); // another tenant's movements stay out of this list
    const secondUser = await createUser(server, tenant);
    await fund(server, tenant.clientId, secondUser, "NGN", "5000");

    const res = await rest(server, "GET", "/v1/transactions", { headers: tenant.headers });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["page", "pages", "total", "transactions"]);
    expect(res.body).toMatchObject({ page: 1, pages: 1, total: 5 });
    expect(res.body.transactions[0]).toMatchObject({ userId: secondUser, type: "DEPOSIT", currency: "NGN", amount: 5000 });
    for (const entry of res.body.transactions) {
      expect(Object.keys(entry)).toEqual(ENTRY_KEYS);
      expect([userId, secondUser]).toContain(entry.userId);
    }

    const paged = await rest(server, "GET", "/v1/transactions?page=2&limit=2", { headers: tenant.headers });
    expect(paged.body).toMatchObject({ page: 2, pages: 3, total: 5 });
    expect(paged.body.transactions).toEqual(res.body.transactions.slice(2, 4));
    expect((await rest(server, "GET", "/v1/transactions?limit=5000", { headers: tenant.headers })).status).toBe(400);
    await expectLedgerInvariants(server, tenant.clientId);
  });
});

describe("GraphQL ledger fields", () => {
  it("serves balances, ledger pages and the transactions query as exact decimals", async () => {
    const { tenant, userId, conversion } = await userWithHistory();
    const res = await gql(
      server,
      `query ($id: ID!) {
        user(id: $id) { balances { currency balance } ledgerPage(limit: 2) { type currency amount } }
        transactionsPage(limit: 1) { total transactions { userId type } }
      }`,
      { id: userId },
      tenant.headers,
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.user.balances).toEqual([
      { currency: "EUR", balance: String(conversion.convertedAmount) },
      { currency: "USD", balance: "60" },
    ]);
    expect(res.body.data.user.ledgerPage).toHaveLength(2);
    expect(res.body.data.transactionsPage).toMatchObject({ total: 4, transactions: [{ userId }] });
  });

  it("refuses a ledger limit above 1000", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const res = await gql(server, `query ($id: ID!) { user(id: $id) { ledgerPage(limit: 1001) { id } } }`, { id: userId }, tenant.headers);
    expect(errorCodes(res)).toEqual(["BAD_USER_INPUT"]);
  });

  it("serves the balances and ledgers of every user of a list", async () => {
    const tenant = await newTenant(server);
    for (let i = 0; i < 3; i++) await fund(server, tenant.clientId, await createUser(server, tenant), "USD", "10");
    const res = await gql(server, `{ users { id balances { currency balance } ledger { edges { node { amount } } } } }`, {}, tenant.headers);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.users.map((u: { balances: unknown[] }) => u.balances)).toEqual(Array(3).fill([{ currency: "USD", balance: "10" }]));
  });
});

describe("ledger verification", () => {
  it("reports every chain valid on an untouched ledger (REST and GraphQL)", async () => {
    const { tenant, userId } = await userWithHistory();
    const res = await rest(server, "GET", `/v1/transactions/ledger/${userId}/verify`, { headers: tenant.headers });
    expect(res.status).toBe(200);
    expect(res.body.valid).toBe(true);
    expect(res.body.chains).toEqual([
      { currency: "EUR", entries: 1, balance: expect.any(Number), valid: true, problems: [] },
      { currency: "USD", entries: 3, balance: 60, valid: true, problems: [] },
    ]);
    const viaGraphQL = await gql(server, `query ($id: ID!) { user(id: $id) { ledgerVerification { valid } } }`, { id: userId }, tenant.headers);
    expect(viaGraphQL.body.data.user.ledgerVerification.valid).toBe(true);
  });

  it("detects an entry whose amount was changed in the database", async () => {
    const { tenant, userId } = await userWithHistory();
    const { prisma } = server.app.db;
    // The append-only trigger has to be lifted to tamper at all; in one transaction, so no other session sees it off.
    await prisma.$transaction([
      prisma.$executeRawUnsafe(`ALTER TABLE ledger_entries DISABLE TRIGGER ledger_entries_append_only`),
      prisma.$executeRaw`UPDATE ledger_entries SET amount = 1000, "balanceAfter" = 1000 WHERE "userId" = ${userId}::uuid AND type = 'DEPOSIT'`,
      prisma.$executeRawUnsafe(`ALTER TABLE ledger_entries ENABLE TRIGGER ledger_entries_append_only`),
    ]);
    const res = await rest(server, "GET", `/v1/transactions/ledger/${userId}/verify`, { headers: tenant.headers });
    expect(res.status).toBe(200);
    expect(res.body.valid).toBe(false);
    const usd = res.body.chains.find((c: { currency: string }) => c.currency === "USD");
    expect(usd.valid).toBe(false);
    expect(usd.problems).toEqual(expect.arrayContaining([expect.stringMatching(/entry 1: hash does not match/), expect.stringMatching(/not balanced/)]));
  });

  it("is refused by the database: entries cannot be updated or deleted", async () => {
    const { userId } = await userWithHistory();
    const { prisma } = server.app.db;
    const before = await prisma.ledgerEntry.findMany({ where: { userId }, orderBy: { id: "asc" } });
    // (The embedded driver does not pass the trigger's message through, so only the refusal is checked.)
    await expect(prisma.$executeRaw`UPDATE ledger_entries SET amount = 1 WHERE "userId" = ${userId}::uuid`).rejects.toThrow();
    await expect(prisma.$executeRaw`DELETE FROM ledger_entries WHERE "userId" = ${userId}::uuid`).rejects.toThrow();
    expect(await prisma.ledgerEntry.findMany({ where: { userId }, orderBy: { id: "asc" } })).toEqual(before);
  });

  it("answers 404 for another client's user", async () => {
    const { userId } = await userWithHistory();
    const stranger = await newTenant(server);
    const res = await rest(server, "GET", `/v1/transactions/ledger/${userId}/verify`, { headers: stranger.headers });
    expect(res.status).toBe(404);
  });
});

describe("GET /v1/accounts/{currency}/{userId}", () => {
  it("answers the balance and the user's virtual account in that currency", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    await fund(server, tenant.clientId, userId, "USD", "12.34");
    const created = await rest(server, "POST", "/v1/virtual-account/usd", { headers: tenant.headers, body: { userId } });
    expect(created.status).toBe(200);
    const res = await rest(server, "GET", `/v1/accounts/usd/${userId}`, { headers: tenant.headers });
    expect(res.status).toBe(200);
    // SPEC §12 adds the three balances beside the contract's balance (the posted one).
    expect(Object.keys(res.body)).toEqual(["currency", "balance", "posted", "pending", "available", "livemode", "virtualAccount"]);
    expect(res.body).toEqual({ currency: "USD", balance: 12.34, posted: 12.34, pending: 12.34, available: 12.34, livemode: false, virtualAccount: created.body });
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it("answers a zero balance and a null account when there is none; the path currency is case-insensitive", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    for (const currency of ["NGN", "eur", "Gbp"]) {
      const res = await rest(server, "GET", `/v1/accounts/${currency}/${userId}`, { headers: tenant.headers });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ currency: currency.toUpperCase(), balance: 0, posted: 0, pending: 0, available: 0, livemode: false, virtualAccount: null });
    }
  });

  it("refuses other currencies with 400 and names the supported ones", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    for (const currency of ["jpy", "mxn"]) {
      const res = await rest(server, "GET", `/v1/accounts/${currency}/${userId}`, { headers: tenant.headers });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/NGN, USD, GBP, EUR/);
    }
  });

  it("answers 404 for an unknown or another client's user, 400 for a non-UUID", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const stranger = await newTenant(server);
    expect((await rest(server, "GET", `/v1/accounts/usd/${userId}`, { headers: stranger.headers })).status).toBe(404);
    expect((await rest(server, "GET", `/v1/accounts/usd/${crypto.randomUUID()}`, { headers: stranger.headers })).status).toBe(404);
    expect((await rest(server, "GET", `/v1/accounts/usd/42`, { headers: stranger.headers })).status).toBe(400);
  });
});

describe("journals posted together (LedgerService.postAll)", () => {
  /** A deposit (positive amount) or a withdrawal (negative) of USD. */
  const movement = (clientId: string, userId: string, amount: string): JournalInput => {
    const value = new Decimal(amount);
    const [type, system] = value.isPositive() ? (["DEPOSIT", "PROVIDER_SETTLEMENT"] as const) : (["WITHDRAWAL", "PAYOUTS"] as const);
    return {
      clientId,
      type,
      postings: [
        { account: { userId, currency: "USD" }, amount: value, type },
        { account: { system, currency: "USD" }, amount: value.negated(), type },
      ],
    };
  };

  it("apply in order, each extending the chains the one before left: a credit then a debit of it succeeds", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const posted = await server.app.db.sql.transaction((tx) =>
      server.app.services.ledger.postAll(tx, [movement(tenant.clientId, userId, "10"), movement(tenant.clientId, userId, "-4")]),
    );
    expect(posted.map((journal) => journal.entries[0]).map((e) => [e.sequence, e.balanceBefore, e.balanceAfter])).toEqual([
      [1, "0", "10"],
      [2, "10", "6"],
    ]);
    expect((await server.app.services.ledger.balance(tenant.clientId, userId, "USD")).toFixed()).toBe("6");
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it("are refused whole when one would take a user balance below zero", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const { prisma } = server.app.db;
    await expect(
      server.app.db.sql.transaction((tx) =>
        server.app.services.ledger.postAll(tx, [movement(tenant.clientId, userId, "-4"), movement(tenant.clientId, userId, "10")]),
      ),
    ).rejects.toMatchObject({ code: "INSUFFICIENT_FUNDS" });
    expect(await prisma.ledgerEntry.count({ where: { clientId: tenant.clientId } })).toBe(0);
  });
});
