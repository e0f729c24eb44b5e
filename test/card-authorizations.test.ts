import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";
import { contractKeys, errorCodes, gql, rest } from "./support/http.js";
import { expectLedgerInvariants } from "./support/ledger.js";
import { waitForEvents, waitForFeed, type FeedEvent } from "./support/events.js";
import { AUTHORIZATION_KEYS, authorize, capture, cardholder, reverse, usdBalances } from "./support/cards.js";
import { bankWithdrawalBody } from "./support/withdrawals.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

const FIELDS = "id userId cardId amount currency merchant status declineReason capturedAmount expiresAt createdAt updatedAt";
const SIMULATE = `mutation ($input: SimulateCardAuthorizationInput!) { simulateCardAuthorization(input: $input) { ${FIELDS} } }`;
const CAPTURE = `mutation ($id: ID!, $amount: Decimal) { captureCardAuthorization(id: $id, amount: $amount) { ${FIELDS} } }`;
const REVERSE = `mutation ($id: ID!) { reverseCardAuthorization(id: $id) { ${FIELDS} } }`;
const LIST = `query ($id: ID!, $status: CardAuthorizationStatus, $first: Int, $after: String) {
  user(id: $id) { cardAuthorizations(status: $status, first: $first, after: $after) { edges { cursor node { id status amount } } pageInfo { hasNextPage } } }
}`;

const cardTransactions = async (tenant: Tenant, userId: string, on = server) =>
  (await rest(on, "GET", `/v1/virtual-cards/transactions/${userId}/1`, { headers: tenant.headers })).body.transactions as { id: string; amount: number; balance: number; description: string; status: string }[];

describe("POST /v1/sandbox/card-authorizations", () => {
  it("holds the amount on USD available (posted unchanged) and answers the PENDING authorization", async () => {
    const { tenant, userId } = await cardholder(server, "100");
    const card = (await rest(server, "GET", `/v1/virtual-cards/${userId}`, { headers: tenant.headers })).body;
    const res = await authorize(server, tenant, { userId, amount: 42.5, merchant: "Hotel Sandbox" });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(AUTHORIZATION_KEYS);
    expect(res.body).toMatchObject({ userId, cardId: card.id, amount: 42.5, currency: "USD", merchant: "Hotel Sandbox", status: "PENDING", declineReason: null, capturedAmount: null });
    expect(new Date(res.body.expiresAt).getTime() - new Date(res.body.createdAt).getTime()).toBe(7 * 24 * 3_600_000);
    expect(await usdBalances(server, tenant, userId)).toEqual({ currency: "USD", posted: 100, pending: 57.5, available: 57.5 });
    expect(await cardTransactions(tenant, userId)).toEqual([]);
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it("declines beyond available with insufficient_funds, and without a card with no_card: recorded, nothing held", async () => {
    const { tenant, userId } = await cardholder(server, "50");
    expect((await authorize(server, tenant, { userId, amount: 30, merchant: "First" })).body.status).toBe("PENDING");
    const short = await authorize(server, tenant, { userId, amount: 20.01, merchant: "Second" });
    expect(short.status).toBe(200);
    expect(short.body).toMatchObject({ status: "DECLINED", declineReason: "insufficient_funds", amount: 20.01 });
    const exact = await authorize(server, tenant, { userId, amount: 20, merchant: "Third" });
    expect(exact.body.status).toBe("PENDING");
    expect(await usdBalances(server, tenant, userId)).toEqual({ currency: "USD", posted: 50, pending: 0, available: 0 });

    const cardless = await cardholder(server, "100", { card: false });
    const noCard = await authorize(server, cardless.tenant, { userId: cardless.userId, amount: 1, merchant: "Shop" });
    expect(noCard.status).toBe(200);
    expect(noCard.body).toMatchObject({ status: "DECLINED", declineReason: "no_card", cardId: null });
    expect(await usdBalances(server, cardless.tenant, cardless.userId)).toMatchObject({ posted: 100, available: 100 });

    const list = await rest(server, "GET", `/v1/virtual-cards/authorizations/${userId}?status=declined`, { headers: tenant.headers });
    expect(list.body.data.map((a: { id: string }) => a.id)).toEqual([short.body.id]);
    await expectLedgerInvariants(server, tenant.clientId);
    await expectLedgerInvariants(server, cardless.tenant.clientId);
  });

  it.each([
    [{ amount: 1.234, merchant: "x" }, /more than 2 decimals/],
    [{ amount: 0, merchant: "x" }, /greater than zero/],
    [{ amount: -1, merchant: "x" }, /positive/],
    [{ amount: "abc", merchant: "x" }, /amount/],
    [{ amount: 1 }, /merchant/],
    [{ amount: 1, merchant: " " }, /merchant/],
    [{ amount: 1, merchant: "x".repeat(256) }, /merchant/],
    [{ amount: 1, merchant: "x", userId: "nope" }, /userId/],
  ])("refuses %j with 400 naming the field, and records nothing", async (body, message) => {
    const { tenant, userId } = await cardholder(server, "10");
    const res = await authorize(server, tenant, { userId, ...body });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(message);
    expect(await server.app.db.prisma.cardAuthorization.count({ where: { clientId: tenant.clientId } })).toBe(0);
  });

  it("replays a retry with the same Idempotency-Key: one authorization, one hold", async () => {
    const { tenant, userId } = await cardholder(server, "100");
    const key = { "idempotency-key": `auth-${crypto.randomUUID()}` };
    const first = await authorize(server, tenant, { userId, amount: 60, merchant: "Hotel" }, key);
    const retry = await authorize(server, tenant, { userId, amount: 60, merchant: "Hotel" }, key);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.body).toEqual(first.body);
    expect(await usdBalances(server, tenant, userId)).toMatchObject({ posted: 100, available: 40 });
    const captureKey = { "idempotency-key": `capture-${crypto.randomUUID()}` };
    const captured = await capture(server, tenant, first.body.id, { amount: 50 }, captureKey);
    const again = await capture(server, tenant, first.body.id, { amount: 50 }, captureKey);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(captured.body);
    expect(await usdBalances(server, tenant, userId)).toMatchObject({ posted: 50, available: 50 });
    await expectLedgerInvariants(server, tenant.clientId);
  });
});

describe("capture and reverse", () => {
  it("a full capture releases the hold and posts a CARD_DEBIT, listed as the settled card transaction of the same id", async () => {
    const { tenant, userId } = await cardholder(server, "100");
    const { body: held } = await authorize(server, tenant, { userId, amount: 42.5, merchant: "Hotel Sandbox" });
    const res = await capture(server, tenant, held.id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: held.id, status: "CAPTURED", capturedAmount: 42.5, amount: 42.5 });
    expect(await usdBalances(server, tenant, userId)).toEqual({ currency: "USD", posted: 57.5, pending: 57.5, available: 57.5 });
    expect(await cardTransactions(tenant, userId)).toEqual([expect.objectContaining({ id: held.id, amount: 42.5, balance: 57.5, description: "Hotel Sandbox", status: "SETTLED" })]);
    const ledger = (await rest(server, "GET", `/v1/transactions/ledger/${userId}`, { headers: tenant.headers })).body;
    expect(ledger[0]).toMatchObject({ type: "CARD_DEBIT", currency: "USD", amount: -42.5, balanceBefore: 100, balanceAfter: 57.5, referenceId: held.id });
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it("a partial capture debits only what it takes; the rest of the hold comes back to available", async () => {
    const { tenant, userId } = await cardholder(server, "100");
    const { body: held } = await authorize(server, tenant, { userId, amount: 80, merchant: "Fuel" });
    const res = await capture(server, tenant, held.id, { amount: "35.25" });
    expect(res.body).toMatchObject({ status: "CAPTURED", amount: 80, capturedAmount: 35.25 });
    expect(await usdBalances(server, tenant, userId)).toEqual({ currency: "USD", posted: 64.75, pending: 64.75, available: 64.75 });
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it("refuses a capture above the authorized amount with 400, changing nothing", async () => {
    const { tenant, userId } = await cardholder(server, "100");
    const { body: held } = await authorize(server, tenant, { userId, amount: 20, merchant: "Shop" });
    for (const amount of [20.01, 0, -1, 1.001]) {
      const res = await capture(server, tenant, held.id, { amount });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/amount/);
    }
    expect((await rest(server, "GET", `/v1/virtual-cards/authorizations/${userId}`, { headers: tenant.headers })).body.data[0].status).toBe("PENDING");
    expect(await usdBalances(server, tenant, userId)).toMatchObject({ posted: 100, available: 80 });
  });

  it("a reversal releases the hold and posts nothing", async () => {
    const { tenant, userId } = await cardholder(server, "100");
    const { body: held } = await authorize(server, tenant, { userId, amount: 25, merchant: "Taxi" });
    const res = await reverse(server, tenant, held.id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: held.id, status: "REVERSED", capturedAmount: null });
    expect(await usdBalances(server, tenant, userId)).toEqual({ currency: "USD", posted: 100, pending: 100, available: 100 });
    expect(await cardTransactions(tenant, userId)).toEqual([]);
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it("any transition but from PENDING is 409 {error} and writes nothing", async () => {
    const { tenant, userId } = await cardholder(server, "100");
    const captured = (await authorize(server, tenant, { userId, amount: 10, merchant: "A" })).body;
    await capture(server, tenant, captured.id);
    const reversed = (await authorize(server, tenant, { userId, amount: 10, merchant: "B" })).body;
    await reverse(server, tenant, reversed.id);
    const declined = (await authorize(server, tenant, { userId, amount: 1000, merchant: "C" })).body;
    // Events counted in the table: the feed shows an event only once older transactions (of other tests too) have ended.
    const eventCount = () => server.app.db.prisma.event.count({ where: { clientId: tenant.clientId } });
    const before = { balances: await usdBalances(server, tenant, userId), events: await eventCount() };

    for (const [id, status] of [[captured.id, "CAPTURED"], [reversed.id, "REVERSED"], [declined.id, "DECLINED"]]) {
      for (const attempt of [() => capture(server, tenant, id), () => reverse(server, tenant, id)]) {
        const res = await attempt();
        expect(res.status).toBe(409);
        expect(contractKeys(res.body)).toEqual(["error"]);
        expect(res.body.error).toContain(status);
      }
      const graph = await gql(server, CAPTURE, { id }, tenant.headers);
      expect(errorCodes(graph)).toEqual(["CONFLICT"]);
    }
    expect(await usdBalances(server, tenant, userId)).toEqual(before.balances);
    expect(await eventCount()).toBe(before.events);
    expect(await cardTransactions(tenant, userId)).toHaveLength(1);
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it.each([
    ["another client's authorization", "stranger", 404],
    ["an unknown id", "unknown", 404],
    ["an id that is not a UUID", "not-a-uuid", 400],
  ])("answers %s (%s) with %i on both surfaces, changing nothing", async (_what, who, status) => {
    const { tenant, userId } = await cardholder(server, "100");
    const { body: held } = await authorize(server, tenant, { userId, amount: 10, merchant: "Shop" });
    const stranger = await newTenant(server);
    const id = who === "stranger" ? held.id : who === "unknown" ? crypto.randomUUID() : who;
    for (const call of [() => capture(server, stranger, id), () => reverse(server, stranger, id)]) {
      const res = await call();
      expect(res.status).toBe(status);
      expect(res.body.status).toBeUndefined();
    }
    const code = status === 404 ? "NOT_FOUND" : "BAD_USER_INPUT";
    expect(errorCodes(await gql(server, CAPTURE, { id }, stranger.headers))).toEqual([code]);
    expect(errorCodes(await gql(server, REVERSE, { id }, stranger.headers))).toEqual([code]);
    // And no authorization for another client's user either.
    expect((await authorize(server, stranger, { userId, amount: 1, merchant: "x" })).status).toBe(404);
    expect(errorCodes(await gql(server, SIMULATE, { input: { userId, amount: "1", merchant: "x" } }, stranger.headers))).toEqual(["NOT_FOUND"]);
    expect((await rest(server, "GET", `/v1/virtual-cards/authorizations/${userId}`, { headers: stranger.headers })).status).toBe(404);
    expect(await usdBalances(server, tenant, userId)).toMatchObject({ posted: 100, available: 90 });
  });
});

describe("verification", () => {
  it("a held amount that is not what the pending authorizations hold fails verify, on REST and GraphQL", async () => {
    const { tenant, userId } = await cardholder(server, "100");
    await authorize(server, tenant, { userId, amount: 30, merchant: "Hotel" });
    const verify = () => rest(server, "GET", `/v1/transactions/ledger/${userId}/verify`, { headers: tenant.headers });
    expect((await verify()).body.valid).toBe(true);
    await server.app.db.prisma.ledgerAccount.updateMany({ where: { clientId: tenant.clientId, userId, currency: "USD" }, data: { held: "20" } });
    const report = (await verify()).body;
    expect(report.valid).toBe(false);
    expect(report.chains.find((c: { currency: string }) => c.currency === "USD").problems).toEqual(["held 20 differs from the pending card authorizations, 30"]);
    const graph = await gql(server, `query ($id: ID!) { user(id: $id) { ledgerVerification { valid chains { problems } } } }`, { id: userId }, tenant.headers);
    expect(graph.body.data.user.ledgerVerification).toEqual({ valid: false, chains: [{ problems: ["held 20 differs from the pending card authorizations, 30"] }] });
  });

  it("the database refuses a held amount above the balance, whatever writes it", async () => {
    const { tenant, userId } = await cardholder(server, "100");
    const where = { clientId: tenant.clientId, userId, currency: "USD" };
    await expect(server.app.db.prisma.ledgerAccount.updateMany({ where, data: { held: "100.01" } })).rejects.toThrow();
    await expect(server.app.db.prisma.ledgerAccount.updateMany({ where, data: { held: "-1" } })).rejects.toThrow();
    await expect(server.app.db.prisma.ledgerAccount.updateMany({ where: { clientId: tenant.clientId, userId: null }, data: { held: "1" } })).rejects.toThrow();
  });
});

describe("GraphQL", () => {
  it("simulateCardAuthorization, captureCardAuthorization and reverseCardAuthorization drive the same rules, with enums", async () => {
    const { tenant, userId } = await cardholder(server, "30");
    const first = await gql(server, SIMULATE, { input: { userId, amount: "20", merchant: "Books" } }, tenant.headers);
    expect(first.body.data.simulateCardAuthorization).toMatchObject({ amount: "20", currency: "USD", status: "PENDING", declineReason: null });
    const declined = await gql(server, SIMULATE, { input: { userId, amount: "10.01", merchant: "Books" } }, tenant.headers);
    expect(declined.body.data.simulateCardAuthorization).toMatchObject({ status: "DECLINED", declineReason: "INSUFFICIENT_FUNDS" });
    const balances = await gql(server, `query ($id: ID!) { user(id: $id) { balances { currency posted pending available } } }`, { id: userId }, tenant.headers);
    expect(balances.body.data.user.balances).toEqual([{ currency: "USD", posted: "30", pending: "10", available: "10" }]);

    const captured = await gql(server, CAPTURE, { id: first.body.data.simulateCardAuthorization.id, amount: "12.5" }, tenant.headers);
    expect(captured.body.data.captureCardAuthorization).toMatchObject({ status: "CAPTURED", capturedAmount: "12.5" });
    expect(errorCodes(await gql(server, REVERSE, { id: first.body.data.simulateCardAuthorization.id }, tenant.headers))).toEqual(["CONFLICT"]);

    const second = await gql(server, SIMULATE, { input: { userId, amount: "5", merchant: "Taxi" } }, tenant.headers);
    const reversed = await gql(server, REVERSE, { id: second.body.data.simulateCardAuthorization.id }, tenant.headers);
    expect(reversed.body.data.reverseCardAuthorization).toMatchObject({ status: "REVERSED" });
    expect(errorCodes(await gql(server, CAPTURE, { id: first.body.data.simulateCardAuthorization.id, amount: "1.001" }, tenant.headers))).toEqual(["BAD_USER_INPUT"]);

    const cardless = await cardholder(server, "5", { card: false });
    const noCard = await gql(server, SIMULATE, { input: { userId: cardless.userId, amount: "1", merchant: "x" } }, cardless.tenant.headers);
    expect(noCard.body.data.simulateCardAuthorization).toMatchObject({ status: "DECLINED", declineReason: "NO_CARD", cardId: null });
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it("User.cardAuthorizations is a connection, newest first, filtered by a status enum", async () => {
    const { tenant, userId } = await cardholder(server, "100");
    const ids: string[] = [];
    for (const amount of [1, 2, 3, 200, 4]) ids.push((await authorize(server, tenant, { userId, amount, merchant: `m${amount}` })).body.id);
    const all = await gql(server, LIST, { id: userId, first: 3 }, tenant.headers);
    const page = all.body.data.user.cardAuthorizations;
    expect(page.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual(ids.slice().reverse().slice(0, 3));
    expect(page.pageInfo.hasNextPage).toBe(true);
    const rest2 = await gql(server, LIST, { id: userId, first: 3, after: page.edges[2].cursor }, tenant.headers);
    expect(rest2.body.data.user.cardAuthorizations.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual(ids.slice(0, 2).reverse());
    const declined = await gql(server, LIST, { id: userId, status: "DECLINED" }, tenant.headers);
    expect(declined.body.data.user.cardAuthorizations.edges.map((e: { node: { id: string; status: string } }) => e.node)).toEqual([{ id: ids[3], status: "DECLINED", amount: "200" }]);
    expect(errorCodes(await gql(server, LIST, { id: userId, status: "SETTLED" }, tenant.headers))).toEqual(["BAD_USER_INPUT"]);
  });
});

describe("GET /v1/virtual-cards/authorizations/{userId}", () => {
  it("lists {data, hasMore} newest first, pages with limit and after, filters by status in any case", async () => {
    const { tenant, userId } = await cardholder(server, "100");
    const ids: string[] = [];
    for (const amount of [1, 2, 3, 4]) ids.push((await authorize(server, tenant, { userId, amount, merchant: `m${amount}` })).body.id);
    await reverse(server, tenant, ids[1]);
    const list = (query: string) => rest(server, "GET", `/v1/virtual-cards/authorizations/${userId}${query}`, { headers: tenant.headers });

    const first = await list("?limit=2");
    expect(first.status).toBe(200);
    expect(Object.keys(first.body)).toEqual(["data", "hasMore"]);
    expect(first.body.data.map((a: { id: string }) => a.id)).toEqual([ids[3], ids[2]]);
    expect(Object.keys(first.body.data[0])).toEqual(AUTHORIZATION_KEYS);
    expect(first.body.hasMore).toBe(true);
    const second = await list(`?limit=2&after=${ids[2]}`);
    expect(second.body).toEqual({ data: [expect.objectContaining({ id: ids[1], status: "REVERSED" }), expect.objectContaining({ id: ids[0] })], hasMore: false });
    expect((await list("?status=reversed")).body.data.map((a: { id: string }) => a.id)).toEqual([ids[1]]);
    expect((await list("?status=PENDING")).body.data).toHaveLength(3);

    for (const [query, field] of [["?status=settled", /status/], ["?limit=0", /limit|first/], ["?after=nope", /after/]] as const) {
      const res = await list(query);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(field);
    }
  });
});

describe("every spend checks available", () => {
  it("a hold keeps withdrawals, conversions and card debits from the held funds, on REST and GraphQL", async () => {
    const { tenant, userId } = await cardholder(server, "100");
    await authorize(server, tenant, { userId, amount: 70, merchant: "Hotel" });

    const withdrawal = await rest(server, "POST", "/v1/withdrawal/usd", { headers: tenant.headers, body: bankWithdrawalBody(userId, "USD", 30.01) });
    expect(withdrawal.status).toBe(500);
    expect(withdrawal.body.details).toMatch(/USD available balance 30 \(balance 100, held 70\) is less than 30.01/);
    const conversion = await rest(server, "POST", "/v1/conversion", { headers: tenant.headers, body: { userId, from: "USD", to: "EUR", amount: 30.01 } });
    expect(conversion.status).toBe(400);
    expect(conversion.body.error).toMatch(/insufficient funds/i);
    const spend = await rest(server, "POST", "/v1/sandbox/card-transactions", { headers: tenant.headers, body: { userId, amount: 30.01, description: "Shop" } });
    expect(spend.status).toBe(400);
    const second = await authorize(server, tenant, { userId, amount: 30.01, merchant: "Shop" });
    expect(second.body.declineReason).toBe("insufficient_funds");

    const mutations = [
      `mutation ($userId: ID!) { createConversion(input: { userId: $userId, from: USD, to: EUR, amount: "30.01" }) { id } }`,
      `mutation ($userId: ID!) { simulateCardTransaction(input: { userId: $userId, amount: "30.01", description: "Shop" }) { id } }`,
      `mutation ($userId: ID!) { withdrawToBank(input: { currency: USD, userId: $userId, firstName: "Ada", lastName: "Lovelace", dob: "1990-05-17",
        amount: "30.01", bankAccount: { account: "123456789", routing: "011000015", type: "checking" } }) { reference } }`,
    ];
    for (const mutation of mutations) expect(errorCodes(await gql(server, mutation, { userId }, tenant.headers))).toEqual(["INSUFFICIENT_FUNDS"]);

    expect((await rest(server, "POST", "/v1/withdrawal/usd", { headers: tenant.headers, body: bankWithdrawalBody(userId, "USD", 30) })).status).toBe(200);
    expect(await usdBalances(server, tenant, userId)).toEqual({ currency: "USD", posted: 70, pending: 0, available: 0 });
    await expectLedgerInvariants(server, tenant.clientId);
  });
});

describe("events", () => {
  it("card.authorization.created (declines too, with their status), .captured and .reversed, with the REST shape", async () => {
    const { tenant, userId } = await cardholder(server, "50");
    const captured = (await authorize(server, tenant, { userId, amount: 20, merchant: "A" })).body;
    const declined = (await authorize(server, tenant, { userId, amount: 31, merchant: "B" })).body;
    const reversed = (await authorize(server, tenant, { userId, amount: 5, merchant: "C" })).body;
    const capturedBody = (await capture(server, tenant, captured.id, { amount: 15 })).body;
    const reversedBody = (await reverse(server, tenant, reversed.id)).body;

    // The six card events, however many others the cardholder's set-up wrote (the feed may show them first).
    const isCardEvent = (event: FeedEvent) => event.type.startsWith("card.");
    const events = (await waitForFeed(server, tenant, (feed) => feed.filter(isCardEvent).length >= 6)).filter(isCardEvent);
    expect(events.map((e) => [e.type, e.data.object.id])).toEqual([
      ["card.authorization.created", captured.id],
      ["card.authorization.created", declined.id],
      ["card.authorization.created", reversed.id],
      ["card.transaction.created", captured.id],
      ["card.authorization.captured", captured.id],
      ["card.authorization.reversed", reversed.id],
    ]);
    expect(events[1].data.object).toEqual(declined);
    expect(events[1].data.object).toMatchObject({ status: "DECLINED", declineReason: "insufficient_funds" });
    expect(events[4].data.object).toEqual(capturedBody);
    expect(events[5].data.object).toEqual(reversedBody);
    const filtered = await rest(server, "GET", "/v1/events?type=card.authorization.captured", { headers: tenant.headers });
    expect(filtered.body.data.map((e: { data: { object: { id: string } } }) => e.data.object.id)).toEqual([captured.id]);
  });
});

describe("expiry (CARD_AUTHORIZATION_TTL)", () => {
  let quick: TestServer;
  beforeAll(async () => {
    quick = await startServer({ env: { CARD_AUTHORIZATION_TTL: "500ms", CARD_AUTHORIZATION_EXPIRY: "on" } });
  });
  afterAll(() => quick?.stop());

  const statusOf = async (tenant: Tenant, userId: string, id: string) =>
    (await rest(quick, "GET", `/v1/virtual-cards/authorizations/${userId}`, { headers: tenant.headers })).body.data.find((a: { id: string }) => a.id === id)?.status;

  it("a PENDING authorization past its TTL becomes EXPIRED by itself: hold released, event recorded, capture and reverse 409", async () => {
    const { tenant, userId } = await cardholder(quick, "100");
    const { body: held } = await authorize(quick, tenant, { userId, amount: 60, merchant: "Hotel" });
    expect(new Date(held.expiresAt).getTime() - new Date(held.createdAt).getTime()).toBe(500);
    const deadline = Date.now() + 10_000;
    while ((await statusOf(tenant, userId, held.id)) === "PENDING" && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await statusOf(tenant, userId, held.id)).toBe("EXPIRED");
    expect(await usdBalances(quick, tenant, userId)).toEqual({ currency: "USD", posted: 100, pending: 100, available: 100 });
    for (const res of [await capture(quick, tenant, held.id), await reverse(quick, tenant, held.id)]) {
      expect(res.status).toBe(409);
      expect(res.body.error).toContain("EXPIRED");
    }
    const events = await waitForEvents(quick, tenant, 1, "&type=card.authorization.expired");
    expect(events.map((e) => e.data.object)).toEqual([expect.objectContaining({ id: held.id, status: "EXPIRED" })]);
    await expectLedgerInvariants(quick, tenant.clientId);
  });

  it("past its expiry, a capture or reversal is refused (409) even before the expiry has run, and writes nothing", async () => {
    const expiry = quick.app.services.cardAuthorizationExpiry;
    await expiry.stop();
    try {
      const { tenant, userId } = await cardholder(quick, "100");
      const { body: held } = await authorize(quick, tenant, { userId, amount: 60, merchant: "Hotel" });
      await new Promise((resolve) => setTimeout(resolve, 600));
      const res = await capture(quick, tenant, held.id);
      expect(res.status).toBe(409);
      // Another test's instance may have expired it meanwhile: refused either way.
      expect(res.body.error).toMatch(/has expired|already EXPIRED/);
      expect(errorCodes(await gql(quick, REVERSE, { id: held.id }, tenant.headers))).toEqual(["CONFLICT"]);
      expect(await cardTransactions(tenant, userId, quick)).toEqual([]);
      await expiry.runOnce();
      expect(await statusOf(tenant, userId, held.id)).toBe("EXPIRED");
      expect(await usdBalances(quick, tenant, userId)).toEqual({ currency: "USD", posted: 100, pending: 100, available: 100 });
      await expectLedgerInvariants(quick, tenant.clientId);
    } finally {
      expiry.start();
    }
  });
});

describe("with SANDBOX off", () => {
  // Starts a second server: slow on the embedded database on a busy machine.
  it("has no sandbox authorization paths, and the mutations answer a live key TEST_MODE_ONLY", { timeout: 90_000 }, async () => {
    const production = await startServer({ env: { SANDBOX: "false" } });
    try {
      const tenant = await newTenant(production, "live");
      const id = crypto.randomUUID();
      for (const path of ["/v1/sandbox/card-authorizations", `/v1/sandbox/card-authorizations/${id}/capture`, `/v1/sandbox/card-authorizations/${id}/reverse`]) {
        expect((await rest(production, "POST", path, { headers: tenant.headers, body: {} })).status).toBe(404);
      }
      expect(errorCodes(await gql(production, SIMULATE, { input: { userId: id, amount: "1", merchant: "x" } }, tenant.headers))).toEqual(["TEST_MODE_ONLY"]);
      expect(errorCodes(await gql(production, CAPTURE, { id }, tenant.headers))).toEqual(["TEST_MODE_ONLY"]);
      expect(errorCodes(await gql(production, REVERSE, { id }, tenant.headers))).toEqual(["TEST_MODE_ONLY"]);
    } finally {
      await production.stop();
    }
  });
});
