import { Decimal } from "decimal.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SandboxFxSource, type Currency, type FxSource } from "../src/providers/fx.js";
import { startServer, newTenant, type Tenant, type TestServer } from "./support/server.js";
import { createUser, errorCodes, gql, rest, contractKeys, contractBody } from "./support/http.js";
import { expectLedgerInvariants, fund } from "./support/ledger.js";
import { MAX_OPEN_QUOTES } from "../src/conversion/service.js";

/** The sandbox FX source, whose market a test can move (an external provider, so it may be replaced). */
class MovableFx implements FxSource {
  private readonly sandbox = new SandboxFxSource();
  factor = new Decimal(1);
  async midRate(from: Currency, to: Currency) {
    return (await this.sandbox.midRate(from, to)).times(this.factor);
  }
}

const fx = new MovableFx();
let server: TestServer;
beforeAll(async () => {
  server = await startServer({ providers: { fx } });
});
afterAll(() => server?.stop());

const QUOTE_KEYS = ["id", "from", "to", "amount", "rate", "fee", "convertedAmount", "expiresAt", "livemode"];
const CONVERSION_KEYS = ["id", "userId", "from", "to", "amount", "rate", "fee", "convertedAmount", "quoteId", "createdAt", "livemode"];

async function fundedUser(currency = "USD", amount = "100") {
  const tenant = await newTenant(server);
  const userId = await createUser(server, tenant);
  await fund(server, tenant.clientId, userId, currency, amount);
  return { tenant, userId };
}

const quote = (tenant: Tenant, query: string) => rest(server, "GET", `/v1/conversion/quote?${query}`, { headers: tenant.headers });
const convert = (tenant: Tenant, body: Record<string, unknown>) => rest(server, "POST", "/v1/conversion", { headers: tenant.headers, body });
const balance = async (tenant: Tenant, userId: string, currency: string) => server.app.services.ledger.balance(tenant.clientId, userId, currency);

describe("GET /v1/conversion/quote", () => {
  it("prices at the mid rate less 0.5%, with a 0.1% fee, rounded down, valid 30 seconds", async () => {
    const tenant = await newTenant(server);
    const before = Date.now();
    const res = await quote(tenant, "from=usd&to=EUR&amount=40");
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(QUOTE_KEYS);
    // mid 0.9215 × 0.995 = 0.9168925; fee 0.04 USD; (40 − 0.04) × 0.9168925 = 36.6390243 → 36.63 EUR
    expect(res.body).toMatchObject({ from: "USD", to: "EUR", amount: 40, rate: 0.9168925, fee: 0.04, convertedAmount: 36.63 });
    // 30 s from the moment the server priced it, which lies between `before` and now (a loaded machine may take a while).
    const expiresAt = Date.parse(res.body.expiresAt);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 30_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 30_000);
  });

  it("rounds down to the target's decimals: 6 for USDC, 18 for DAI", async () => {
    const tenant = await newTenant(server);
    const usdc = await quote(tenant, "from=NGN&to=USDC&amount=1000");
    // 1/1535.25 × 0.995 = 0.000648103... per NGN; 999 NGN after the fee → 0.647455… USDC
    expect(usdc.status).toBe(200);
    expect(String(usdc.body.convertedAmount)).toMatch(/^0\.\d{1,6}$/);
    const viaGraphQL = await gql(server, `{ conversionQuote(from: USDC, to: DAI, amount: "1.5") { rate fee convertedAmount } }`, {}, tenant.headers);
    expect(viaGraphQL.body.data.conversionQuote).toEqual({ rate: "0.995", fee: "0.0015", convertedAmount: "1.4910075" });
  });

  it.each([
    ["from=USD&to=USD&amount=10", /different/],
    ["from=USD&to=JPY&amount=10", /to must be one of/],
    ["from=XXX&to=USD&amount=10", /from must be one of/],
    ["from=USD&to=EUR&amount=10.001", /more than 2 decimals/],
    ["from=USDC&to=EUR&amount=1.1234567", /more than 6 decimals/],
    ["from=USD&to=EUR&amount=0", /greater than zero/],
    ["from=USD&to=EUR&amount=-5", /positive/],
    ["from=USD&to=EUR&amount=NaN", /amount/],
    ["from=USD&to=EUR&amount=ten", /amount/],
    ["from=USD&to=EUR", /amount/],
    ["to=EUR&amount=1", /from/],
    ["from=NGN&to=USD&amount=0.01", /too small/],
    ["from=USD&to=EUR&amount=1e30", /amount/],
  ])("refuses %s with 400 naming the problem", async (query, message) => {
    const tenant = await newTenant(server);
    const res = await quote(tenant, query);
    expect(res.status).toBe(400);
    expect(contractKeys(res.body)).toEqual(["error"]);
    expect(res.body.error).toMatch(message);
  });
});

describe("POST /v1/conversion", () => {
  it("converts at the current rate and records CONVERSION_OUT, FEE and CONVERSION_IN in one journal", async () => {
    const { tenant, userId } = await fundedUser();
    const res = await convert(tenant, { userId, from: "USD", to: "EUR", amount: 40 });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(CONVERSION_KEYS);
    expect(res.body).toMatchObject({ userId, from: "USD", to: "EUR", amount: 40, rate: 0.9168925, fee: 0.04, convertedAmount: 36.63, quoteId: null });
    expect((await balance(tenant, userId, "USD")).toFixed()).toBe("60");
    expect((await balance(tenant, userId, "EUR")).toFixed()).toBe("36.63");
    const entries = await server.app.db.prisma.ledgerEntry.findMany({ where: { referenceId: res.body.id } });
    expect(new Set(entries.map((e) => e.journalId)).size).toBe(1);
    const userSide = entries.filter((e) => e.userId === userId).map((e) => `${e.type} ${e.currency} ${new Decimal(e.amount.toString()).toFixed()}`);
    expect(userSide.sort()).toEqual(["CONVERSION_IN EUR 36.63", "CONVERSION_OUT USD -39.96", "FEE USD -0.04"]);
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it("converts crypto with 6 decimals exactly", async () => {
    const { tenant, userId } = await fundedUser("USDC", "10.123456");
    const res = await convert(tenant, { userId, from: "USDC", to: "USDT", amount: "10.123456" });
    expect(res.status).toBe(200);
    // fee 0.010123 (rounded down); 10.113333 × 0.995 = 10.062766335 → 10.062766
    expect(res.body).toMatchObject({ fee: 0.010123, convertedAmount: 10.062766 });
    expect((await balance(tenant, userId, "USDC")).toFixed()).toBe("0");
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it("keeps DAI's 18 decimals exact through conversions and balances", async () => {
    const { tenant, userId } = await fundedUser("DAI", "100.123456789012345678");
    const res = await convert(tenant, { userId, from: "DAI", to: "USDC", amount: "0.000000000000000001" });
    expect(res.status).toBe(400); // converts to less than one USDC unit
    const ok = await gql(
      server,
      `mutation ($input: CreateConversionInput!) { createConversion(input: $input) { fee convertedAmount } }`,
      { input: { userId, from: "DAI", to: "USDC", amount: "0.100000000000000001" } },
      tenant.headers,
    );
    // fee 0.0001 DAI; 0.099900000000000001 × 0.995 → 0.099400 USDC
    expect(ok.body.data.createConversion).toEqual({ fee: "0.0001", convertedAmount: "0.0994" });
    expect((await balance(tenant, userId, "DAI")).toFixed()).toBe("100.023456789012345677");
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it("refuses insufficient funds with 400 {error, details} and moves nothing", async () => {
    const { tenant, userId } = await fundedUser("USD", "10");
    const res = await convert(tenant, { userId, from: "USD", to: "EUR", amount: 10.01 });
    expect(res.status).toBe(400);
    expect(contractKeys(res.body)).toEqual(["error", "details"]);
    expect(res.body.error).toMatch(/insufficient funds/i);
    const noBalance = await convert(tenant, { userId, from: "GBP", to: "EUR", amount: 1 });
    expect(noBalance.status).toBe(400);
    expect(noBalance.body.details).toMatch(/GBP/);
    expect((await balance(tenant, userId, "USD")).toFixed()).toBe("10");
    expect(await server.app.db.prisma.conversion.count({ where: { userId } })).toBe(0);
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it("answers 404 for an unknown or another client's user, 400 for bad ids and amounts", async () => {
    const { userId } = await fundedUser();
    const stranger = await newTenant(server);
    const body = { from: "USD", to: "EUR", amount: 1 };
    const other = await convert(stranger, { ...body, userId });
    const unknown = await convert(stranger, { ...body, userId: crypto.randomUUID() });
    expect(other.status).toBe(404);
    expect(contractBody(other.body)).toEqual(contractBody(unknown.body));
    expect((await convert(stranger, { ...body, userId: "nope" })).body.error).toMatch(/userId/);
    expect((await convert(stranger, body)).status).toBe(400);
    expect((await convert(stranger, { ...body, userId, amount: "1.234" })).status).toBe(400);
    expect((await convert(stranger, { ...body, userId, amount: true })).status).toBe(400);
    expect((await convert(stranger, { ...body, userId, quoteId: "q" })).body.error).toMatch(/quoteId/);
  });
});

describe("quotes lock the rate", () => {
  it("converts at the quoted rate after the market moved, once", async () => {
    const { tenant, userId } = await fundedUser();
    const quoted = await quote(tenant, "from=USD&to=EUR&amount=20");
    fx.factor = new Decimal(2);
    try {
      const res = await convert(tenant, { userId, from: "USD", to: "EUR", amount: 20, quoteId: quoted.body.id });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ quoteId: quoted.body.id, rate: quoted.body.rate, convertedAmount: quoted.body.convertedAmount });
      const unquoted = await convert(tenant, { userId, from: "USD", to: "EUR", amount: 20 });
      expect(unquoted.body.rate).toBeCloseTo(quoted.body.rate * 2, 9);
      const again = await convert(tenant, { userId, from: "USD", to: "EUR", amount: 20, quoteId: quoted.body.id });
      expect(again.status).toBe(400);
      expect(again.body.error).toMatch(/already used/);
    } finally {
      fx.factor = new Decimal(1);
    }
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it("refuses a quote that expired, does not match, or belongs to another client", async () => {
    const { tenant, userId } = await fundedUser();
    const stranger = await newTenant(server);
    const theirs = await quote(stranger, "from=USD&to=EUR&amount=5");
    const ours = await quote(tenant, "from=USD&to=EUR&amount=5");
    const body = { userId, from: "USD", to: "EUR", amount: 5 };
    expect((await convert(tenant, { ...body, quoteId: theirs.body.id })).body.error).toMatch(/no such quote/);
    expect((await convert(tenant, { ...body, quoteId: crypto.randomUUID() })).body.error).toMatch(/no such quote/);
    expect((await convert(tenant, { ...body, amount: 6, quoteId: ours.body.id })).body.error).toMatch(/another from, to or amount/);
    expect((await convert(tenant, { ...body, to: "GBP", quoteId: ours.body.id })).body.error).toMatch(/another from, to or amount/);
    await server.app.db.prisma.conversionQuote.update({ where: { id: ours.body.id }, data: { expiresAt: new Date(Date.now() - 1) } });
    const expired = await convert(tenant, { ...body, quoteId: ours.body.id });
    expect(expired.status).toBe(400);
    expect(expired.body.error).toMatch(/expired/);
    expect((await balance(tenant, userId, "USD")).toFixed()).toBe("100");
  });

  it("keeps a quote usable when its conversion failed for insufficient funds", async () => {
    const { tenant, userId } = await fundedUser("USD", "1");
    const quoted = await quote(tenant, "from=USD&to=GBP&amount=2");
    expect((await convert(tenant, { userId, from: "USD", to: "GBP", amount: 2, quoteId: quoted.body.id })).status).toBe(400);
    await fund(server, tenant.clientId, userId, "USD", "1");
    const res = await convert(tenant, { userId, from: "USD", to: "GBP", amount: 2, quoteId: quoted.body.id });
    expect(res.status).toBe(200);
    await expectLedgerInvariants(server, tenant.clientId);
  });
});

describe("the bound on stored quotes", () => {
  const quotes = (count: number) =>
    `{ ${Array.from({ length: count }, (_, i) => `q${i}: conversionQuote(from: USD, to: EUR, amount: "${i + 1}") { id }`).join(" ")} }`;
  const unused = (tenant: Tenant) => server.app.db.prisma.conversionQuote.count({ where: { clientId: tenant.clientId, usedAt: null } });

  it("refuses an operation that asks for more than 5 quotes (aliases count) before storing any", async () => {
    const tenant = await newTenant(server);
    const five = await gql(server, quotes(5), {}, tenant.headers);
    expect(five.body.errors).toBeUndefined();
    const six = await gql(server, quotes(6), {}, tenant.headers);
    expect(six.status).toBe(400);
    expect(six.body.errors?.[0]?.message).toBe("conversionQuote can be asked for at most 5 times in one operation");
    expect(await unused(tenant)).toBe(5);
  });

  it(`keeps at most ${MAX_OPEN_QUOTES} unused quotes per client, deletes unused ones once old, and still converts at a quote within its 30 s`, async () => {
    const { tenant, userId } = await fundedUser();
    const { prisma } = server.app.db;
    const terms = { clientId: tenant.clientId, from: "USD", to: "EUR", amount: 1, rate: 0.9, fee: 0, convertedAmount: 0.9, expiresAt: new Date(Date.now() + 30_000) };
    await prisma.conversionQuote.createMany({ data: Array.from({ length: MAX_OPEN_QUOTES - 1 }, () => terms) });
    const last = await quote(tenant, "from=USD&to=EUR&amount=20");
    expect(last.status).toBe(200);
    const refused = await quote(tenant, "from=USD&to=EUR&amount=20");
    expect(refused.status, JSON.stringify(refused.body)).toBe(429);
    expect(refused.body.error).toBe(`At most ${MAX_OPEN_QUOTES} unused quotes at once: use one or wait for them to expire`);
    // Redeeming one makes room.
    expect((await convert(tenant, { userId, from: "USD", to: "EUR", amount: 20, quoteId: last.body.id })).status).toBe(200);
    expect((await quote(tenant, "from=USD&to=EUR&amount=20")).status).toBe(200);
    // Once they are two minutes old, unused quotes are deleted by the next quote.
    await prisma.conversionQuote.updateMany({ where: { clientId: tenant.clientId, usedAt: null }, data: { createdAt: new Date(Date.now() - 121_000) } });
    expect((await quote(tenant, "from=USD&to=EUR&amount=3")).status).toBe(200);
    expect(await unused(tenant)).toBe(1);
    expect(await prisma.conversionQuote.count({ where: { id: last.body.id } })).toBe(1);
  });
});

describe("GraphQL createConversion", () => {
  it("converts, and reports INSUFFICIENT_FUNDS as a typed error", async () => {
    const { tenant, userId } = await fundedUser("EUR", "50");
    const mutation = `mutation ($input: CreateConversionInput!) { createConversion(input: $input) { from to amount convertedAmount quoteId } }`;
    const ok = await gql(server, mutation, { input: { userId, from: "EUR", to: "USDC", amount: "50" } }, tenant.headers);
    expect(ok.body.errors).toBeUndefined();
    expect(ok.body.data.createConversion).toMatchObject({ from: "EUR", to: "USDC", amount: "50", quoteId: null });
    const short = await gql(server, mutation, { input: { userId, from: "EUR", to: "USDC", amount: "0.01" } }, tenant.headers);
    expect(errorCodes(short)).toEqual(["INSUFFICIENT_FUNDS"]);
    await expectLedgerInvariants(server, tenant.clientId);
  });
});

describe("prepareInTransaction (for deposit auto-conversion)", () => {
  it("records a conversion at the current rate inside the caller's transaction, whose journal the caller posts; it rolls back with it", async () => {
    const { tenant, userId } = await fundedUser("NGN", "15352.50");
    const { prisma, sql } = server.app.db;
    const { conversion, ledger } = server.app.services;
    const input = { clientId: tenant.clientId, userId, from: "NGN", to: "USDC", amount: "15352.50" };
    const result = await sql.transaction(async (tx) => {
      const prepared = await conversion.prepareInTransaction(tx, input);
      await ledger.post(tx, prepared.journal);
      return prepared;
    });
    // 15352.50 − fee 15.35 = 15337.15 NGN; / 1535.25 = 9.99000163 × 0.995 = 9.94005162 → 9.940051 USDC
    expect(result.convertedAmount.toFixed()).toBe("9.940051");
    expect(result.conversion).toMatchObject({ userId, from: "NGN", to: "USDC", quoteId: null });
    expect(result.journal).toMatchObject({ type: "CONVERSION_OUT", referenceId: result.conversion.id });
    expect((await balance(tenant, userId, "USDC")).toFixed()).toBe("9.940051");

    await expect(
      sql.transaction(async (tx) => {
        await ledger.post(tx, (await conversion.prepareInTransaction(tx, { ...input, from: "USDC", to: "USD", amount: "9" })).journal);
        throw new Error("the caller failed afterwards");
      }),
    ).rejects.toThrow(/caller failed/);
    expect((await balance(tenant, userId, "USDC")).toFixed()).toBe("9.940051");
    expect(await prisma.conversion.count({ where: { userId } })).toBe(1);
    await expectLedgerInvariants(server, tenant.clientId);
  });
});
