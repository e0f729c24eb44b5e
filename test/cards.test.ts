import cardValidator from "card-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SandboxCardIssuer } from "../src/providers/card-issuer.js";
import { newTenant, startServer, type TestServer } from "./support/server.js";
import { createUser, errorCodes, gql, rest, contractKeys } from "./support/http.js";

const CARD_FIELDS = ["id", "userId", "providerId", "cardNumber", "cardCVV", "cardExpiry", "createdAt", "updatedAt", "livemode"];
const TRANSACTION_FIELDS = ["id", "amount", "balance", "created_ts", "description", "status", "type", "livemode"];

/** The sandbox issuer, counting how many cards it issued (to prove concurrent losers issue none). */
const issuer = new SandboxCardIssuer();
let issued = 0;

let server: TestServer;
beforeAll(async () => {
  server = await startServer({
    providers: {
      cardIssuer: {
        issueCard: (holder) => {
          issued++;
          return issuer.issueCard(holder);
        },
      },
    },
  });
});
afterAll(() => server?.stop());

/** Card transactions as the ledger will write them, one minute apart (the last is the newest). */
async function insertTransactions(userId: string, count: number) {
  const card = await server.app.db.prisma.card.findUniqueOrThrow({ where: { userId } });
  for (let i = 0; i < count; i++) {
    await server.app.db.prisma.cardTransaction.create({
      data: {
        cardId: card.id,
        userId,
        clientId: card.clientId,
        amount: "12.5",
        balance: String(1000 - i),
        description: `Merchant ${i}`,
        status: "SETTLED",
        type: "DEBIT",
        createdAt: new Date(Date.UTC(2024, 0, 1, 0, i)),
      },
    });
  }
}

function expectValidCard(card: Record<string, string>) {
  expect(Object.keys(card)).toEqual(CARD_FIELDS);
  expect(card.cardNumber).toMatch(/^\d{4} \d{4} \d{4} \d{4}$/);
  expect(cardValidator.number(card.cardNumber.replace(/ /g, "")).isValid).toBe(true);
  expect(card.cardCVV).toMatch(/^\d{3}$/);
  expect(cardValidator.expirationDate(card.cardExpiry).isValid).toBe(true);
  expect(card.cardExpiry).toMatch(/^(0[1-9]|1[0-2])\/\d\d$/);
}

describe("GET /v1/virtual-cards/{userId}", () => {
  it("creates the card when absent, then returns the same card", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const first = await rest(server, "GET", `/v1/virtual-cards/${userId}`, { headers: tenant.headers });
    expect(first.status).toBe(200);
    expectValidCard(first.body);
    expect(first.body.userId).toBe(userId);
    const second = await rest(server, "GET", `/v1/virtual-cards/${userId}`, { headers: tenant.headers });
    expect(second.body).toEqual(first.body);
  });

  it("issues exactly one card for 20 concurrent requests, and the losers issue nothing", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const issuedBefore = issued;
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        i % 2
          ? rest(server, "GET", `/v1/virtual-cards/${userId}`, { headers: tenant.headers })
          : rest(server, "POST", "/v1/virtual-cards", { headers: tenant.headers, body: { userId } }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect(await server.app.db.prisma.card.count({ where: { userId } })).toBe(1);
    expect(issued - issuedBefore).toBe(1);
  });

  it("answers 404 for an unknown user and another client's user, 400 for a malformed id", async () => {
    const [tenant, other] = await Promise.all([newTenant(server), newTenant(server)]);
    const foreignUser = await createUser(server, other);
    for (const userId of [crypto.randomUUID(), foreignUser]) {
      const res = await rest(server, "GET", `/v1/virtual-cards/${userId}`, { headers: tenant.headers });
      expect(res.status).toBe(404);
      expect(contractKeys(res.body)).toEqual(["error"]);
    }
    expect(await server.app.db.prisma.card.count({ where: { userId: foreignUser } })).toBe(0);
    const bad = await rest(server, "GET", "/v1/virtual-cards/nope", { headers: tenant.headers });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/userId/);
  });

  it("answers 401 without credentials", async () => {
    const res = await rest(server, "GET", `/v1/virtual-cards/${crypto.randomUUID()}`);
    expect(res.status).toBe(401);
  });
});

describe("POST /v1/virtual-cards", () => {
  it("creates a card, and returns the existing one on a repeat", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const created = await rest(server, "POST", "/v1/virtual-cards", { headers: tenant.headers, body: { userId } });
    expect(created.status).toBe(200);
    expectValidCard(created.body);
    const again = await rest(server, "POST", "/v1/virtual-cards", { headers: tenant.headers, body: { userId } });
    expect(again.body).toEqual(created.body);
  });

  it("answers 400 for a missing or malformed userId and 404 for another client's user", async () => {
    const [tenant, other] = await Promise.all([newTenant(server), newTenant(server)]);
    for (const body of [{}, { userId: 42 }]) {
      const res = await rest(server, "POST", "/v1/virtual-cards", { headers: tenant.headers, body });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/userId/);
    }
    const foreign = await rest(server, "POST", "/v1/virtual-cards", { headers: tenant.headers, body: { userId: await createUser(server, other) } });
    expect(foreign.status).toBe(404);
  });
});

describe("POST /v1/virtual-cards when the issuer fails", () => {
  let failing: TestServer;
  beforeAll(async () => {
    failing = await startServer({ providers: { cardIssuer: { issueCard: async () => Promise.reject(new Error("issuer down")) } } });
  });
  afterAll(() => failing?.stop());

  it("answers 500 {error} and stores no card", async () => {
    const tenant = await newTenant(failing);
    const userId = await createUser(failing, tenant);
    const res = await rest(failing, "POST", "/v1/virtual-cards", { headers: tenant.headers, body: { userId } });
    expect(res.status).toBe(500);
    expect(contractKeys(res.body)).toEqual(["error"]);
    expect(await failing.app.db.prisma.card.count({ where: { userId } })).toBe(0);
  });
});

describe("card secrets at rest and in logs", () => {
  it("keeps neither the card number nor the CVV in plain text in the cards table or the log", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const card = (await rest(server, "GET", `/v1/virtual-cards/${userId}`, { headers: tenant.headers })).body;
    await gql(server, `query ($id: ID!) { user(id: $id) { card { cardNumber cardCVV } } }`, { id: userId }, tenant.headers);
    const rows = await server.app.db.prisma.$queryRawUnsafe<Record<string, unknown>[]>("select * from cards where \"userId\" = $1::uuid", userId);
    expect(rows).toHaveLength(1);
    const stored = JSON.stringify(rows);
    const digits = card.cardNumber.replace(/ /g, "");
    for (const text of [stored, server.logs.join("\n")]) {
      expect(text).not.toContain(digits);
      expect(text).not.toContain(card.cardNumber);
    }
    // The 3-digit CVV could appear by chance inside base64 or a timestamp; look for it as a value.
    expect(Object.values(rows[0]).map(String)).not.toContain(card.cardCVV);
    expect(server.logs.join("\n")).not.toMatch(new RegExp(`"(cvv|cardCVV|cardCvv)"\\s*:\\s*"${card.cardCVV}"`));
    expect(rows[0].last4).toBe(digits.slice(-4));
  });
});

describe("GET /v1/virtual-cards/transactions/{userId}/{page}", () => {
  it("returns pages of 20, newest first, in the contract's envelope", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    await rest(server, "GET", `/v1/virtual-cards/${userId}`, { headers: tenant.headers });
    await insertTransactions(userId, 25);
    const first = await rest(server, "GET", `/v1/virtual-cards/transactions/${userId}/1`, { headers: tenant.headers });
    expect(first.status).toBe(200);
    expect(Object.keys(first.body)).toEqual(["page", "pages", "total", "transactions"]);
    expect(first.body).toMatchObject({ page: 1, pages: 2, total: 25 });
    expect(first.body.transactions).toHaveLength(20);
    expect(Object.keys(first.body.transactions[0])).toEqual(TRANSACTION_FIELDS);
    expect(first.body.transactions[0]).toMatchObject({ amount: 12.5, balance: 976, description: "Merchant 24", status: "SETTLED", type: "DEBIT" });
    expect(first.body.transactions[0].created_ts).toBe("2024-01-01T00:24:00.000Z");
    const second = await rest(server, "GET", `/v1/virtual-cards/transactions/${userId}/2`, { headers: tenant.headers });
    expect(second.body.transactions.map((t: { description: string }) => t.description)).toEqual(
      ["Merchant 4", "Merchant 3", "Merchant 2", "Merchant 1", "Merchant 0"],
    );
  });

  it("returns an empty page past the end with the true pages and total", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    await rest(server, "GET", `/v1/virtual-cards/${userId}`, { headers: tenant.headers });
    await insertTransactions(userId, 3);
    const res = await rest(server, "GET", `/v1/virtual-cards/transactions/${userId}/5`, { headers: tenant.headers });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ page: 5, pages: 1, total: 3, transactions: [] });
  });

  it("answers 400 for a page below 1 or not an integer", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    await rest(server, "GET", `/v1/virtual-cards/${userId}`, { headers: tenant.headers });
    for (const page of ["0", "-1", "1.5", "abc"]) {
      const res = await rest(server, "GET", `/v1/virtual-cards/transactions/${userId}/${page}`, { headers: tenant.headers });
      expect(res.status, page).toBe(400);
      expect(res.body.error).toMatch(/page/);
    }
  });

  it("answers 404 {error} for a user without a card, an unknown user and another client's user", async () => {
    const [tenant, other] = await Promise.all([newTenant(server), newTenant(server)]);
    const [withoutCard, foreignUser] = await Promise.all([createUser(server, tenant), createUser(server, other)]);
    await rest(server, "GET", `/v1/virtual-cards/${foreignUser}`, { headers: other.headers });
    for (const userId of [withoutCard, crypto.randomUUID(), foreignUser]) {
      const res = await rest(server, "GET", `/v1/virtual-cards/transactions/${userId}/1`, { headers: tenant.headers });
      expect(res.status).toBe(404);
      expect(contractKeys(res.body)).toEqual(["error"]);
    }
    expect(await server.app.db.prisma.card.count({ where: { userId: withoutCard } })).toBe(0);
  });
});

describe("GraphQL cards", () => {
  it("User.card is null and never created by reading; createVirtualCard issues it", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const query = `query ($id: ID!) { user(id: $id) { card { id cardNumber cardCVV cardExpiry } cardTransactions { totalCount } } }`;
    const before = await gql(server, query, { id: userId }, tenant.headers);
    expect(before.body.data.user).toEqual({ card: null, cardTransactions: { totalCount: 0 } });
    expect(await server.app.db.prisma.card.count({ where: { userId } })).toBe(0);
    const created = await gql(server, `mutation ($id: ID!) { createVirtualCard(userId: $id) { id cardNumber } }`, { id: userId }, tenant.headers);
    const after = await gql(server, query, { id: userId }, tenant.headers);
    expect(after.body.data.user.card.id).toBe(created.body.data.createVirtualCard.id);
    expect(after.body.data.user.card.cardNumber).toBe(created.body.data.createVirtualCard.cardNumber);
    expect(after.body.data.user.cardTransactions).toEqual({ totalCount: 0 });
  });

  it("cardTransactionsPage pages with exact decimal strings, and refuses page 0", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    await rest(server, "GET", `/v1/virtual-cards/${userId}`, { headers: tenant.headers });
    await insertTransactions(userId, 21);
    const query = `query ($id: ID!, $page: Int) { cardTransactionsPage(userId: $id, page: $page) { page pages total transactions { amount balance } } }`;
    const res = await gql(server, query, { id: userId, page: 2 }, tenant.headers);
    expect(res.body.data.cardTransactionsPage).toEqual({ page: 2, pages: 2, total: 21, transactions: [{ amount: "12.5", balance: "1000" }] });
    const bad = await gql(server, query, { id: userId, page: 0 }, tenant.headers);
    expect(errorCodes(bad)).toEqual(["BAD_USER_INPUT"]);
  });
});
