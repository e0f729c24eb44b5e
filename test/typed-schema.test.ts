import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENTRY_TYPES } from "../src/ledger/types.js";
import { CURRENCIES } from "../src/providers/fx.js";
import { createUser, errorCodes, gql, rest } from "./support/http.js";
import { fund } from "./support/ledger.js";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

type Entry = { id: string; type: string; currency: string; amount: string };
type LedgerConnection = {
  totalCount: number;
  edges: { cursor: string; node: Entry }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
};

/** A user with 9 ledger entries: 3 deposits, then 2 conversions of 3 entries each (sharing their journal's time). */
async function userWithNineEntries() {
  const tenant = await newTenant(server);
  const userId = await createUser(server, tenant);
  for (const amount of ["100", "50", "25"]) await fund(server, tenant.clientId, userId, "USD", amount);
  for (const amount of [10, 20]) {
    const conversion = await rest(server, "POST", "/v1/conversion", { headers: tenant.headers, body: { userId, from: "usd", to: "eur", amount } });
    expect(conversion.status).toBe(200);
  }
  return { tenant, userId };
}

const LEDGER_PAGE = `query ($id: ID!, $first: Int, $after: String, $last: Int, $before: String) {
  user(id: $id) {
    ledger(first: $first, after: $after, last: $last, before: $before) {
      totalCount
      edges { cursor node { id type currency amount } }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    }
  }
}`;

async function ledgerConnection(tenant: Tenant, variables: Record<string, unknown>): Promise<LedgerConnection> {
  const res = await gql(server, LEDGER_PAGE, variables, tenant.headers);
  expect(res.body.errors).toBeUndefined();
  return res.body.data.user.ledger;
}

async function allEntries(tenant: Tenant, userId: string): Promise<Entry[]> {
  const res = await gql(server, `query ($id: ID!) { user(id: $id) { ledgerPage(limit: 1000) { id type currency amount } } }`, { id: userId }, tenant.headers);
  return res.body.data.user.ledgerPage;
}

describe("enums", () => {
  it("serve ledger entry types, currencies, deposit statuses and networks as enum values", async () => {
    const { tenant, userId } = await userWithNineEntries();
    const res = await gql(
      server,
      `query ($id: ID!) {
        user(id: $id) { ledgerPage(limit: 3) { type currency } balances { currency } }
        usd: conversionQuote(from: USD, to: USDC, amount: "1") { from to }
        __type(name: "LedgerEntryType") { kind enumValues { name } }
      }`,
      { id: userId },
      tenant.headers,
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.user.ledgerPage.map((entry: { type: string }) => entry.type).sort()).toEqual(["CONVERSION_IN", "CONVERSION_OUT", "FEE"]);
    expect(res.body.data.user.balances).toEqual([{ currency: "EUR" }, { currency: "USD" }]);
    expect(res.body.data.usd).toEqual({ from: "USD", to: "USDC" });
    expect(res.body.data.__type).toEqual({ kind: "ENUM", enumValues: ENTRY_TYPES.map((name) => ({ name })) });
  });

  it.each([
    ["a literal outside the enum", `{ conversionQuote(from: XYZ, to: USD, amount: "1") { id } }`, {}],
    ["a string literal where an enum value goes", `{ conversionQuote(from: "USD", to: EUR, amount: "1") { id } }`, {}],
    ["a variable outside the enum", `query ($from: Currency!) { conversionQuote(from: $from, to: USD, amount: "1") { id } }`, { from: "usd" }],
    ["a network outside the enum", `query ($id: ID!) { usdcAccount(userId: $id, chain: SOLANA) { id } }`, { id: crypto.randomUUID() }],
  ])("refuse %s with 400 BAD_USER_INPUT", async (_name, query, variables) => {
    const tenant = await newTenant(server);
    const res = await gql(server, query, variables, tenant.headers);
    expect(res.status).toBe(400);
    expect(errorCodes(res)).toEqual(["BAD_USER_INPUT"]);
  });

  it("REST accepts codes in any case and names the field and the enum's values when one is refused", async () => {
    const tenant = await newTenant(server);
    const quote = await rest(server, "GET", "/v1/conversion/quote?from=usd&to=Eur&amount=10", { headers: tenant.headers });
    expect(quote.status).toBe(200);
    expect(quote.body).toMatchObject({ from: "USD", to: "EUR" });
    const refused = await rest(server, "GET", "/v1/conversion/quote?from=usd&to=xyz&amount=10", { headers: tenant.headers });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe(`to must be one of ${CURRENCIES.join(", ")}`);
  });
});

describe("connections", () => {
  it("first/after walk a user's ledger newest first without gap or repeat", async () => {
    const { tenant, userId } = await userWithNineEntries();
    const expected = await allEntries(tenant, userId);
    expect(expected).toHaveLength(9);

    const walked: Entry[] = [];
    const pages: number[] = [];
    let after: string | null = null;
    for (;;) {
      const page = await ledgerConnection(tenant, { id: userId, first: 4, after });
      expect(page.totalCount).toBe(9);
      walked.push(...page.edges.map((edge) => edge.node));
      pages.push(page.edges.length);
      expect(page.pageInfo.endCursor).toBe(page.edges.at(-1)?.cursor ?? null);
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    expect(pages).toEqual([4, 4, 1]);
    expect(walked).toEqual(expected);
  });

  it("last/before walk it backwards from the oldest", async () => {
    const { tenant, userId } = await userWithNineEntries();
    const expected = await allEntries(tenant, userId);
    const oldest = await ledgerConnection(tenant, { id: userId, last: 5 });
    expect(oldest.edges.map((edge) => edge.node)).toEqual(expected.slice(4));
    expect(oldest.pageInfo.hasPreviousPage).toBe(true);
    const newer = await ledgerConnection(tenant, { id: userId, last: 5, before: oldest.pageInfo.startCursor });
    expect(newer.edges.map((edge) => edge.node)).toEqual(expected.slice(0, 4));
    expect(newer.pageInfo.hasPreviousPage).toBe(false);
  });

  it("the client-wide transactions connection holds the same entries as its numbered pages", async () => {
    const { tenant } = await userWithNineEntries();
    const res = await gql(
      server,
      `{ transactions(first: 5) { totalCount edges { node { id } } } transactionsPage(limit: 5) { total transactions { id } } }`,
      {},
      tenant.headers,
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.transactions.totalCount).toBe(res.body.data.transactionsPage.total);
    expect(res.body.data.transactions.edges.map((edge: { node: unknown }) => edge.node)).toEqual(res.body.data.transactionsPage.transactions);
  });

  it("REST keeps its numbered pages: /v1 ledger pages are the connection's slices, as JSON numbers", async () => {
    const { tenant, userId } = await userWithNineEntries();
    const expected = await allEntries(tenant, userId);
    const res = await rest(server, "GET", `/v1/transactions/ledger/${userId}?page=2&limit=4`, { headers: tenant.headers });
    expect(res.status).toBe(200);
    expect(res.body.map((entry: Entry) => ({ id: entry.id, amount: entry.amount }))).toEqual(
      expected.slice(4, 8).map((entry) => ({ id: entry.id, amount: Number(entry.amount) })),
    );
  });

  it.each([
    ["a negative first", { first: -1 }],
    ["a cursor that is not one", { first: 2, after: "not-a-cursor" }],
    ["a well-formed cursor naming no entry", { first: 2, after: Buffer.from("GPC:S:not-an-id").toString("base64") }],
  ])("refuse %s with BAD_USER_INPUT", async (_name, variables) => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const res = await gql(server, LEDGER_PAGE, { id: userId, ...variables }, tenant.headers);
    expect(errorCodes(res)).toEqual(["BAD_USER_INPUT"]);
  });
});
