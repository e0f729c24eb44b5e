import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";
import { createUser, errorCodes, gql, rest, contractKeys } from "./support/http.js";
import { expectLedgerInvariants, fund } from "./support/ledger.js";
import {
  BANK_ACCOUNTS,
  HOLDER,
  NGN_ACCOUNT,
  USDC_ADDRESS,
  WITHDRAWAL_KEYS,
  balanceOf as balanceIn,
  bankWithdrawalBody,
  fundedUser as fundedUserIn,
} from "./support/withdrawals.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

const newUser = (tenant: Tenant) => createUser(server, tenant, HOLDER);
const fundedUser = (tenant: Tenant, currency: string, amount: string) => fundedUserIn(server, tenant, currency, amount);
const balance = (tenant: Tenant, userId: string, currency: string) => balanceIn(server, tenant, userId, currency);

const withdrawToBank = (tenant: Tenant, currency: string, body: unknown, headers: Record<string, string> = {}) =>
  rest(server, "POST", `/v1/withdrawal/${currency}`, { headers: { ...tenant.headers, ...headers }, body });
const withdrawNgn = (tenant: Tenant, body: unknown) => rest(server, "POST", "/v1/withdrawals/ngn", { headers: tenant.headers, body });
const withdrawUsdc = (tenant: Tenant, body: unknown) => rest(server, "POST", "/v1/withdrawals/usdc", { headers: tenant.headers, body });
const getWithdrawal = (tenant: Tenant, reference: string) => rest(server, "GET", `/v1/withdrawals/${reference}`, { headers: tenant.headers });
const sandbox = (tenant: Tenant, reference: string, action: "complete" | "fail", body?: unknown) =>
  rest(server, "POST", `/v1/sandbox/withdrawals/${reference}/${action}`, { headers: tenant.headers, body });

const ngnBody = (userId: string, overrides: Record<string, unknown> = {}) => ({ userId, amount: 5000, ...NGN_ACCOUNT, narration: "Rent", ...overrides });
const usdcBody = (userId: string, overrides: Record<string, unknown> = {}) => ({
  userId,
  amount: 12.5,
  walletAddress: USDC_ADDRESS,
  network: "ETHEREUM",
  chainId: 1,
  ...overrides,
});

/** The user-side ledger entries of a withdrawal, as "TYPE CURRENCY amount". */
async function userEntries(reference: string) {
  const entries = await server.app.db.prisma.ledgerEntry.findMany({ where: { referenceId: reference, userId: { not: null } }, orderBy: { sequence: "asc" } });
  return entries.map((e) => `${e.type} ${e.currency} ${e.amount.toFixed()}`);
}

describe("GET /v1/withdrawal/currencies", () => {
  it("lists exactly USD, EUR, MXN and BRL with their names", async () => {
    const tenant = await newTenant(server);
    const res = await rest(server, "GET", "/v1/withdrawal/currencies", { headers: tenant.headers });
    expect(res.status).toBe(200);
    expect(res.body).toStrictEqual({
      supportedCurrencies: ["USD", "EUR", "MXN", "BRL"],
      description: { USD: "US Dollar", EUR: "Euro", MXN: "Mexican Peso", BRL: "Brazilian Real" },
    });
  });

  it("needs credentials", async () => {
    const res = await rest(server, "GET", "/v1/withdrawal/currencies");
    expect(res.status).toBe(401);
  });
});

describe("POST /v1/withdrawal/{currency}", () => {
  it.each(["usd", "EUR", "mxn", "Brl"] as const)("withdraws %s: the contract's body plus reference and status, debiting that currency", async (path) => {
    const currency = path.toUpperCase() as keyof typeof BANK_ACCOUNTS;
    const tenant = await newTenant(server);
    const userId = await fundedUser(tenant, currency, "100");
    const res = await withdrawToBank(tenant, path, bankWithdrawalBody(userId, currency, 40.25));
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["success", "message", "currency", "amount", "reference", "status"]);
    expect(res.body).toMatchObject({ success: true, message: `${currency} withdrawal initiated`, currency, amount: 40.25, status: "PENDING" });
    expect(res.body.reference).toMatch(/^wd_[0-9a-f]{24}$/);
    expect(await balance(tenant, userId, currency)).toBe("59.75");
    expect(await userEntries(res.body.reference)).toEqual([`WITHDRAWAL ${currency} -40.25`]);
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it("stores the normalised destination and shows it masked", async () => {
    const tenant = await newTenant(server);
    const userId = await fundedUser(tenant, "EUR", "10");
    const res = await withdrawToBank(tenant, "eur", bankWithdrawalBody(userId, "EUR", 1));
    const stored = await server.app.db.prisma.withdrawal.findUniqueOrThrow({ where: { reference: res.body.reference } });
    expect(JSON.parse(stored.destination)).toEqual({ currency: "EUR", account: "DE89370400440532013000", routing: "COBADEFFXXX", type: "savings" });
    expect((await getWithdrawal(tenant, res.body.reference)).body).toMatchObject({ type: "BANK", destination: "****3000", fee: 0 });
  });

  it("accepts a BRL branch and account without hyphens", async () => {
    const tenant = await newTenant(server);
    const userId = await fundedUser(tenant, "BRL", "10");
    const res = await withdrawToBank(tenant, "brl", { ...bankWithdrawalBody(userId, "BRL", 1), bankAccount: { account: "123456789", routing: "2600001", type: "checking" } });
    expect(res.status).toBe(200);
  });

  it("refuses an unsupported currency with 400 {error} naming the supported ones", async () => {
    const tenant = await newTenant(server);
    const userId = await fundedUser(tenant, "USD", "10");
    for (const currency of ["ngn", "gbp", "usdc"]) {
      const res = await withdrawToBank(tenant, currency, bankWithdrawalBody(userId, "USD", 1));
      expect(res.status).toBe(400);
      expect(contractKeys(res.body)).toEqual(["error"]);
      expect(res.body.error).toMatch(/USD, EUR, MXN, BRL/);
    }
  });

  const cases: [string, keyof typeof BANK_ACCOUNTS, Record<string, unknown>, RegExp][] = [
    ["an ABA routing number one digit off", "USD", { bankAccount: { ...BANK_ACCOUNTS.USD, routing: "011000016" } }, /bankAccount\.routing.*ABA/],
    ["a USD account of 3 digits", "USD", { bankAccount: { ...BANK_ACCOUNTS.USD, account: "123" } }, /bankAccount\.account.*4 to 17 digits/],
    ["a USD account with letters", "USD", { bankAccount: { ...BANK_ACCOUNTS.USD, account: "12345A789" } }, /bankAccount\.account/],
    ["an IBAN one digit off", "EUR", { bankAccount: { ...BANK_ACCOUNTS.EUR, account: "DE89370400440532013001" } }, /bankAccount\.account.*IBAN/],
    ["an invalid BIC", "EUR", { bankAccount: { ...BANK_ACCOUNTS.EUR, routing: "COBAXXFFXXX" } }, /bankAccount\.routing.*BIC/],
    ["a CLABE one digit off", "MXN", { bankAccount: { ...BANK_ACCOUNTS.MXN, account: "002010077777777772" } }, /bankAccount\.account.*CLABE/],
    ["a CLABE of 17 digits", "MXN", { bankAccount: { ...BANK_ACCOUNTS.MXN, account: "00201007777777777" } }, /bankAccount\.account.*CLABE/],
    ["an MXN routing that is not the CLABE's bank", "MXN", { bankAccount: { ...BANK_ACCOUNTS.MXN, routing: "646" } }, /bankAccount\.routing.*bank code/],
    ["a BRL account one digit off", "BRL", { bankAccount: { ...BANK_ACCOUNTS.BRL, account: "12345679-9" } }, /bankAccount\.account.*check digit/],
    ["a BRL routing without a branch", "BRL", { bankAccount: { ...BANK_ACCOUNTS.BRL, routing: "260" } }, /bankAccount\.routing.*branch/],
    ["an unknown account type", "USD", { bankAccount: { ...BANK_ACCOUNTS.USD, type: "brokerage" } }, /bankAccount\.type.*checking or savings/],
    ["no bankAccount", "USD", { bankAccount: undefined }, /bankAccount is required/],
    ["no routing", "USD", { bankAccount: { account: "123456789", type: "checking" } }, /routing is required/],
    ["an amount below 0.01", "USD", { amount: 0.001 }, /amount has more than 2 decimals/],
    ["a zero amount", "USD", { amount: 0 }, /amount must be greater than zero/],
    ["a negative amount", "USD", { amount: -5 }, /amount must be a positive decimal/],
    ["a non-numeric amount", "USD", { amount: "ten" }, /amount/],
    ["no amount", "USD", { amount: undefined }, /amount is required/],
    ["no firstName", "USD", { firstName: undefined }, /firstName is required/],
    ["no dob", "USD", { dob: undefined }, /dob is required/],
    ["a dob that is not a date", "USD", { dob: "17/05/1990" }, /dob must be a date YYYY-MM-DD/],
    ["a non-UUID userId", "USD", { userId: "42" }, /userId must be a UUID/],
    ["a firstName that is not the user's", "USD", { firstName: "Grace" }, /firstName does not match/],
    ["a lastName that is not the user's", "USD", { lastName: "Hopper" }, /lastName does not match/],
    ["a dob that is not the user's", "USD", { dob: "1990-05-18" }, /dob does not match/],
  ];
  it.each(cases)("refuses %s with 400 {error} naming the field, moving nothing", async (_name, currency, overrides, message) => {
    const tenant = await newTenant(server);
    const userId = await fundedUser(tenant, currency, "100");
    const res = await withdrawToBank(tenant, currency.toLowerCase(), { ...bankWithdrawalBody(userId, currency, 10), ...overrides });
    expect(res.status).toBe(400);
    expect(contractKeys(res.body)).toEqual(["error"]);
    expect(res.body.error).toMatch(message);
    expect(await balance(tenant, userId, currency)).toBe("100");
    expect(await server.app.db.prisma.withdrawal.count({ where: { userId } })).toBe(0);
  });

  it("matches the holder's names without regard to case or surrounding spaces", async () => {
    const tenant = await newTenant(server);
    const userId = await fundedUser(tenant, "USD", "10");
    const res = await withdrawToBank(tenant, "usd", { ...bankWithdrawalBody(userId, "USD", 1), firstName: " ada ", lastName: "LOVELACE" });
    expect(res.status).toBe(200);
  });

  it("answers insufficient funds with 500 {error, details}, moving nothing", async () => {
    const tenant = await newTenant(server);
    const userId = await fundedUser(tenant, "USD", "10");
    const res = await withdrawToBank(tenant, "usd", bankWithdrawalBody(userId, "USD", 10.01));
    expect(res.status).toBe(500);
    expect(contractKeys(res.body)).toEqual(["error", "details"]);
    expect(res.body.error).toMatch(/insufficient funds/i);
    expect(res.body.details).toMatch(/USD balance 10 is less than 10.01/);
    // Another currency's balance does not count: the user must convert first.
    const eur = await withdrawToBank(tenant, "eur", bankWithdrawalBody(userId, "EUR", 1));
    expect(eur.status).toBe(500);
    expect(await balance(tenant, userId, "USD")).toBe("10");
    expect(await server.app.db.prisma.withdrawal.count({ where: { userId } })).toBe(0);
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it("answers 404 for an unknown user or another client's user", async () => {
    const tenant = await newTenant(server);
    const stranger = await newTenant(server);
    const userId = await fundedUser(tenant, "USD", "10");
    for (const [who, id] of [[stranger, userId], [tenant, crypto.randomUUID()]] as const) {
      const res = await withdrawToBank(who, "usd", bankWithdrawalBody(id, "USD", 1));
      expect(res.status).toBe(404);
      expect(contractKeys(res.body)).toEqual(["error"]);
    }
    expect(await balance(tenant, userId, "USD")).toBe("10");
  });

  it("moves money once for a retry with the same Idempotency-Key", async () => {
    const tenant = await newTenant(server);
    const userId = await fundedUser(tenant, "USD", "100");
    const key = { "idempotency-key": `wd-${crypto.randomUUID()}` };
    const body = bankWithdrawalBody(userId, "USD", 30);
    const first = await withdrawToBank(tenant, "usd", body, key);
    const retry = await withdrawToBank(tenant, "usd", body, key);
    expect(first.status).toBe(200);
    expect(retry.status).toBe(200);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.body).toEqual(first.body);
    expect(await balance(tenant, userId, "USD")).toBe("70");
    expect(await server.app.db.prisma.withdrawal.count({ where: { userId } })).toBe(1);
    await expectLedgerInvariants(server, tenant.clientId);
  });
});

describe("POST /v1/withdrawals/ngn", () => {
  it("returns the withdrawal record, the account masked, and debits NGN", async () => {
    const tenant = await newTenant(server);
    const userId = await fundedUser(tenant, "NGN", "10000");
    const res = await withdrawNgn(tenant, ngnBody(userId));
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(WITHDRAWAL_KEYS);
    expect(res.body).toMatchObject({ userId, type: "NGN_BANK", currency: "NGN", amount: 5000, fee: 0, status: "PENDING", destination: "****6785", failureReason: null });
    expect(await balance(tenant, userId, "NGN")).toBe("5000");
    expect(await userEntries(res.body.reference)).toEqual(["WITHDRAWAL NGN -5000"]);
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it("needs neither bankName nor narration", async () => {
    const tenant = await newTenant(server);
    const userId = await fundedUser(tenant, "NGN", "100");
    const res = await withdrawNgn(tenant, ngnBody(userId, { amount: 1, bankName: undefined, narration: undefined }));
    expect(res.status).toBe(200);
  });

  it.each([
    ["a NUBAN one digit off", { accountNumber: "0123456784" }, /accountNumber is not a valid NUBAN for bankCode/],
    ["a NUBAN of another bank", { bankCode: "044" }, /accountNumber is not a valid NUBAN/],
    ["a 9-digit account number", { accountNumber: "012345678" }, /accountNumber must be a 10-digit NUBAN/],
    ["a 2-digit bank code", { bankCode: "58" }, /bankCode must be a 3-digit bank code/],
    ["no accountNumber", { accountNumber: undefined }, /accountNumber is required/],
    ["no bankCode", { bankCode: undefined }, /bankCode is required/],
    ["no accountName", { accountName: undefined }, /accountName is required/],
    ["an empty accountName", { accountName: " " }, /accountName must be 1 to 100 characters/],
    ["no amount", { amount: undefined }, /amount is required/],
    ["an amount with 3 decimals", { amount: 1.005 }, /more than 2 decimals/],
    ["no userId", { userId: undefined }, /userId is required/],
  ])("refuses %s with 400 {error}", async (_name, overrides, message) => {
    const tenant = await newTenant(server);
    const userId = await fundedUser(tenant, "NGN", "10000");
    const res = await withdrawNgn(tenant, ngnBody(userId, overrides));
    expect(res.status).toBe(400);
    expect(contractKeys(res.body)).toEqual(["error"]);
    expect(res.body.error).toMatch(message);
    expect(await balance(tenant, userId, "NGN")).toBe("10000");
  });

  it("answers insufficient funds with 500 {error, details}", async () => {
    const tenant = await newTenant(server);
    const userId = await fundedUser(tenant, "NGN", "100");
    const res = await withdrawNgn(tenant, ngnBody(userId, { amount: 100.01 }));
    expect(res.status).toBe(500);
    expect(contractKeys(res.body)).toEqual(["error", "details"]);
    expect(await balance(tenant, userId, "NGN")).toBe("100");
  });
});

describe("POST /v1/withdrawals/usdc", () => {
  it("returns the withdrawal record, the address masked, and debits USDC to 6 decimals", async () => {
    const tenant = await newTenant(server);
    const userId = await fundedUser(tenant, "USDC", "20");
    const res = await withdrawUsdc(tenant, usdcBody(userId, { amount: "12.345678", network: "base", chainId: 8453 }));
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(WITHDRAWAL_KEYS);
    expect(res.body).toMatchObject({ userId, type: "USDC", currency: "USDC", amount: 12.345678, fee: 0, status: "PENDING", destination: "0x71C7…976F" });
    expect(await balance(tenant, userId, "USDC")).toBe("7.654322");
    const stored = await server.app.db.prisma.withdrawal.findUniqueOrThrow({ where: { reference: res.body.reference } });
    expect(JSON.parse(stored.destination)).toEqual({ address: USDC_ADDRESS, network: "BASE", chainId: 8453 });
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it("accepts an all-lowercase address and stores it checksummed", async () => {
    const tenant = await newTenant(server);
    const userId = await fundedUser(tenant, "USDC", "20");
    const res = await withdrawUsdc(tenant, usdcBody(userId, { walletAddress: USDC_ADDRESS.toLowerCase() }));
    expect(res.status).toBe(200);
    expect(res.body.destination).toBe("0x71C7…976F");
  });

  it.each([
    ["a mixed-case address with a wrong checksum", { walletAddress: "0xa0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48" }, /walletAddress.*EIP-55/],
    ["an address one character short", { walletAddress: USDC_ADDRESS.slice(0, -1) }, /walletAddress must be a valid EVM address/],
    ["a non-hex address", { walletAddress: "0xZ0b86991c6218b36c1d19d4a2e9eb0ce3606eb48" }, /walletAddress/],
    ["an unknown network", { network: "SOLANA" }, /network must be one of ETHEREUM, POLYGON, BASE, ARBITRUM, OPTIMISM/],
    ["a chainId of another network", { network: "POLYGON", chainId: 1 }, /chainId must be 137 for POLYGON/],
    ["a chainId for ARBITRUM's neighbour", { network: "ARBITRUM", chainId: 10 }, /chainId must be 42161/],
    ["a chainId as text", { chainId: "1" }, /chainId/],
    ["no walletAddress", { walletAddress: undefined }, /walletAddress is required/],
    ["no network", { network: undefined }, /network is required/],
    ["no chainId", { chainId: undefined }, /chainId is required/],
    ["an amount with 7 decimals", { amount: "1.1234567" }, /more than 6 decimals/],
  ])("refuses %s with 400 {error}", async (_name, overrides, message) => {
    const tenant = await newTenant(server);
    const userId = await fundedUser(tenant, "USDC", "20");
    const res = await withdrawUsdc(tenant, usdcBody(userId, overrides));
    expect(res.status).toBe(400);
    expect(contractKeys(res.body)).toEqual(["error"]);
    expect(res.body.error).toMatch(message);
    expect(await balance(tenant, userId, "USDC")).toBe("20");
  });

  it("answers insufficient funds with 500 {error, details}", async () => {
    const tenant = await newTenant(server);
    const userId = await newUser(tenant);
    const res = await withdrawUsdc(tenant, usdcBody(userId));
    expect(res.status).toBe(500);
    expect(contractKeys(res.body)).toEqual(["error", "details"]);
    await expectLedgerInvariants(server, tenant.clientId);
  });
});

describe("GET /v1/withdrawals/{reference} and /v1/withdrawals/user/{userId}", () => {
  it("returns one record by reference and the user's records newest first", async () => {
    const tenant = await newTenant(server);
    const userId = await fundedUser(tenant, "USD", "100");
    await fundedUserIn(server, tenant, "NGN", "1"); // another user of the same client stays out of the list
    const first = await withdrawToBank(tenant, "usd", bankWithdrawalBody(userId, "USD", 1));
    const second = await withdrawToBank(tenant, "usd", bankWithdrawalBody(userId, "USD", 2));

    const one = await getWithdrawal(tenant, first.body.reference);
    expect(one.status).toBe(200);
    expect(Object.keys(one.body)).toEqual(WITHDRAWAL_KEYS);
    expect(one.body).toMatchObject({ reference: first.body.reference, userId, type: "BANK", currency: "USD", amount: 1, destination: "****6789" });

    const list = await rest(server, "GET", `/v1/withdrawals/user/${userId}`, { headers: tenant.headers });
    expect(list.status).toBe(200);
    expect(list.body.map((w: { reference: string }) => w.reference)).toEqual([second.body.reference, first.body.reference]);
    for (const record of list.body) expect(Object.keys(record)).toEqual(WITHDRAWAL_KEYS);
  });

  it("returns an empty list for a user without withdrawals", async () => {
    const tenant = await newTenant(server);
    const userId = await newUser(tenant);
    const list = await rest(server, "GET", `/v1/withdrawals/user/${userId}`, { headers: tenant.headers });
    expect(list).toMatchObject({ status: 200, body: [] });
  });

  it("answers 404 for an unknown reference or another client's withdrawal or user, 400 for a non-UUID user id", async () => {
    const tenant = await newTenant(server);
    const stranger = await newTenant(server);
    const userId = await fundedUser(tenant, "USD", "10");
    const { body } = await withdrawToBank(tenant, "usd", bankWithdrawalBody(userId, "USD", 1));
    for (const res of [
      await getWithdrawal(stranger, body.reference),
      await getWithdrawal(tenant, "wd_000000000000000000000000"),
      await rest(server, "GET", `/v1/withdrawals/user/${userId}`, { headers: stranger.headers }),
      await rest(server, "GET", `/v1/withdrawals/user/${crypto.randomUUID()}`, { headers: tenant.headers }),
      await sandbox(stranger, body.reference, "fail"),
      await sandbox(stranger, body.reference, "complete"),
    ]) {
      expect(res.status).toBe(404);
      expect(contractKeys(res.body)).toEqual(["error"]);
    }
    const bad = await rest(server, "GET", "/v1/withdrawals/user/not-a-uuid", { headers: tenant.headers });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/userId|id/);
    expect((await getWithdrawal(tenant, body.reference)).body.status).toBe("PENDING");
    expect(await balance(tenant, userId, "USD")).toBe("9");
  });
});

describe("withdrawal lifecycle (sandbox)", () => {
  it("completes a pending withdrawal, keeping the debit", async () => {
    const tenant = await newTenant(server);
    const userId = await fundedUser(tenant, "USD", "50");
    const { body } = await withdrawToBank(tenant, "usd", bankWithdrawalBody(userId, "USD", 20));
    const res = await sandbox(tenant, body.reference, "complete");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ reference: body.reference, status: "COMPLETED", failureReason: null });
    expect((await sandbox(tenant, body.reference, "complete")).status).toBe(409);
    expect(await balance(tenant, userId, "USD")).toBe("30");
    const late = await sandbox(tenant, body.reference, "fail");
    expect(late.status).toBe(409);
    expect(late.body.error).toMatch(/Withdrawal is COMPLETED: only a PENDING or PROCESSING withdrawal can be failed/);
    expect(await balance(tenant, userId, "USD")).toBe("30");
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it("fails a withdrawal with WITHDRAWAL_REVERSAL, restoring the balance exactly, once", async () => {
    const tenant = await newTenant(server);
    const userId = await fundedUser(tenant, "USDC", "10.000001");
    const { body } = await withdrawUsdc(tenant, usdcBody(userId, { amount: "9.999999" }));
    expect(await balance(tenant, userId, "USDC")).toBe("0.000002");
    const res = await sandbox(tenant, body.reference, "fail", { reason: "Address is blocked" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "FAILED", failureReason: "Address is blocked" });
    expect(await balance(tenant, userId, "USDC")).toBe("10.000001");
    const again = await sandbox(tenant, body.reference, "fail");
    expect(again.status).toBe(409);
    expect(await balance(tenant, userId, "USDC")).toBe("10.000001");
    expect(await userEntries(body.reference)).toEqual(["WITHDRAWAL USDC -9.999999", "WITHDRAWAL_REVERSAL USDC 9.999999"]);
    expect((await sandbox(tenant, body.reference, "complete")).status).toBe(409);
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it("gives a failure a default reason", async () => {
    const tenant = await newTenant(server);
    const userId = await fundedUser(tenant, "NGN", "100");
    const { body } = await withdrawNgn(tenant, ngnBody(userId, { amount: 100 }));
    const res = await sandbox(tenant, body.reference, "fail");
    expect(res.body.failureReason).toMatch(/rejected/);
    expect(await balance(tenant, userId, "NGN")).toBe("100");
  });

  it("answers 404 for an unknown reference, and 400 for text that cannot be a reference", async () => {
    const tenant = await newTenant(server);
    expect((await sandbox(tenant, "wd_000000000000000000000000", "complete")).status).toBe(404);
    for (const malformed of ["wd_unknown", "WD_000000000000000000000000", "wd_%00"]) {
      const res = await sandbox(tenant, malformed, "complete");
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/reference/);
    }
  });
});

describe("GraphQL withdrawals", () => {
  const WITHDRAWAL = "reference userId type currency amount fee status destination failureReason createdAt updatedAt";

  it("withdrawToBank, withdrawNgn, withdrawUsdc, then withdrawal(reference) and User.withdrawals", async () => {
    const tenant = await newTenant(server);
    const userId = await fundedUser(tenant, "MXN", "1000");
    await fund(server, tenant.clientId, userId, "NGN", "1000");
    await fund(server, tenant.clientId, userId, "USDC", "1000");
    const bank = await gql(
      server,
      `mutation ($input: WithdrawToBankInput!) { withdrawToBank(input: $input) { ${WITHDRAWAL} } }`,
      { input: { currency: "MXN", ...bankWithdrawalBody(userId, "MXN", "100.50") } },
      tenant.headers,
    );
    expect(bank.body.data.withdrawToBank).toMatchObject({ userId, type: "BANK", currency: "MXN", amount: "100.5", fee: "0", status: "PENDING", destination: "****7771" });
    const ngn = await gql(server, `mutation ($input: WithdrawNgnInput!) { withdrawNgn(input: $input) { reference amount } }`, { input: ngnBody(userId, { amount: "10" }) }, tenant.headers);
    expect(ngn.body.data.withdrawNgn.amount).toBe("10");
    const usdc = await gql(server, `mutation ($input: WithdrawUsdcInput!) { withdrawUsdc(input: $input) { reference destination } }`, { input: usdcBody(userId) }, tenant.headers);
    expect(usdc.body.data.withdrawUsdc.destination).toBe("0x71C7…976F");

    const one = await gql(server, `query ($r: ID!) { withdrawal(reference: $r) { reference status } }`, { r: bank.body.data.withdrawToBank.reference }, tenant.headers);
    expect(one.body.data.withdrawal).toEqual({ reference: bank.body.data.withdrawToBank.reference, status: "PENDING" });
    const user = await gql(server, `query ($id: ID!) { user(id: $id) { withdrawals { totalCount edges { node { currency } } } } }`, { id: userId }, tenant.headers);
    expect(user.body.data.user.withdrawals.totalCount).toBe(3);
    expect(user.body.data.user.withdrawals.edges.map((edge: { node: unknown }) => edge.node)).toEqual([{ currency: "USDC" }, { currency: "NGN" }, { currency: "MXN" }]);
    const paged = await gql(server, `query ($id: ID!) { user(id: $id) { withdrawalsPage(page: 2, limit: 2) { currency } } }`, { id: userId }, tenant.headers);
    expect(paged.body.data.user.withdrawalsPage).toEqual([{ currency: "MXN" }]);
    await expectLedgerInvariants(server, tenant.clientId);
  });

  it("supportedWithdrawalCurrencies lists codes and names", async () => {
    const tenant = await newTenant(server);
    const res = await gql(server, `{ supportedWithdrawalCurrencies { code name } }`, {}, tenant.headers);
    expect(res.body.data.supportedWithdrawalCurrencies).toEqual([
      { code: "USD", name: "US Dollar" },
      { code: "EUR", name: "Euro" },
      { code: "MXN", name: "Mexican Peso" },
      { code: "BRL", name: "Brazilian Real" },
    ]);
  });

  it("types insufficient funds as INSUFFICIENT_FUNDS, bad input as BAD_USER_INPUT, another client's as NOT_FOUND", async () => {
    const tenant = await newTenant(server);
    const stranger = await newTenant(server);
    const userId = await fundedUser(tenant, "USD", "5");
    const mutation = `mutation ($input: WithdrawToBankInput!) { withdrawToBank(input: $input) { reference } }`;
    const short = await gql(server, mutation, { input: { currency: "USD", ...bankWithdrawalBody(userId, "USD", "6") } }, tenant.headers);
    expect(errorCodes(short)).toEqual(["INSUFFICIENT_FUNDS"]);
    const mismatch = await gql(server, mutation, { input: { currency: "USD", ...bankWithdrawalBody(userId, "USD", "1"), ...HOLDER, dob: "2000-01-01" } }, tenant.headers);
    expect(errorCodes(mismatch)).toEqual(["BAD_USER_INPUT"]);
    const foreign = await gql(server, mutation, { input: { currency: "USD", ...bankWithdrawalBody(userId, "USD", "1") } }, stranger.headers);
    expect(errorCodes(foreign)).toEqual(["NOT_FOUND"]);
    const { body } = await withdrawToBank(tenant, "usd", bankWithdrawalBody(userId, "USD", 1));
    const lookup = await gql(server, `query ($r: ID!) { withdrawal(reference: $r) { reference } }`, { r: body.reference }, stranger.headers);
    expect(errorCodes(lookup)).toEqual(["NOT_FOUND"]);
    const failed = await gql(server, `mutation ($r: ID!) { failWithdrawal(reference: $r) { status } }`, { r: body.reference }, stranger.headers);
    expect(errorCodes(failed)).toEqual(["NOT_FOUND"]);
    expect(await balance(tenant, userId, "USD")).toBe("4");
  });

  it("completeWithdrawal and failWithdrawal drive the lifecycle", async () => {
    const tenant = await newTenant(server);
    const userId = await fundedUser(tenant, "BRL", "10");
    const first = await withdrawToBank(tenant, "brl", bankWithdrawalBody(userId, "BRL", 3));
    const second = await withdrawToBank(tenant, "brl", bankWithdrawalBody(userId, "BRL", 4));
    const done = await gql(server, `mutation ($r: ID!) { completeWithdrawal(reference: $r) { status } }`, { r: first.body.reference }, tenant.headers);
    expect(done.body.data.completeWithdrawal.status).toBe("COMPLETED");
    const failed = await gql(server, `mutation ($r: ID!) { failWithdrawal(reference: $r, reason: "Closed account") { status failureReason } }`, { r: second.body.reference }, tenant.headers);
    expect(failed.body.data.failWithdrawal).toEqual({ status: "FAILED", failureReason: "Closed account" });
    expect(await balance(tenant, userId, "BRL")).toBe("7");
    await expectLedgerInvariants(server, tenant.clientId);
  });
});
