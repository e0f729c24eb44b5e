import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitForEvents } from "./support/events.js";
import { gql, rest } from "./support/http.js";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";
import { BANK_ACCOUNTS, HOLDER, fundedUser } from "./support/withdrawals.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

const CPF = "52998224725";
type Outcome = { status: number; error?: string; reference?: string };
const STATUS_OF: Record<string, number> = { BAD_USER_INPUT: 400 };

function graphqlOutcome(res: { body: { data?: any; errors?: { message: string; extensions?: { code?: string } }[] } }, field: string): Outcome {
  const error = res.body.errors?.[0];
  if (error) return { status: STATUS_OF[error.extensions?.code ?? ""] ?? 500, error: error.message };
  return { status: 200, reference: res.body.data[field].reference };
}

/** The NGN and bank withdrawals, on each surface, answering one shape. */
const surfaces = {
  REST: {
    ngn: async (tenant: Tenant, body: Record<string, unknown>): Promise<Outcome> => {
      const res = await rest(server, "POST", "/v1/withdrawals/ngn", { headers: tenant.headers, body });
      return { status: res.status, error: res.body.error, reference: res.body.reference };
    },
    bank: async (tenant: Tenant, currency: string, body: Record<string, unknown>): Promise<Outcome> => {
      const res = await rest(server, "POST", `/v1/withdrawal/${currency.toLowerCase()}`, { headers: tenant.headers, body });
      return { status: res.status, error: res.body.error, reference: res.body.reference };
    },
  },
  GraphQL: {
    ngn: async (tenant: Tenant, input: Record<string, unknown>): Promise<Outcome> =>
      graphqlOutcome(await gql(server, `mutation ($input: WithdrawNgnInput!) { withdrawNgn(input: $input) { reference } }`, { input }, tenant.headers), "withdrawNgn"),
    bank: async (tenant: Tenant, currency: string, input: Record<string, unknown>): Promise<Outcome> =>
      graphqlOutcome(
        await gql(server, `mutation ($input: WithdrawToBankInput!) { withdrawToBank(input: $input) { reference } }`, { input: { currency, ...input } }, tenant.headers),
        "withdrawToBank",
      ),
  },
};

const destinationOf = async (tenant: Tenant, reference: string) =>
  (await rest(server, "GET", `/v1/withdrawals/${reference}`, { headers: tenant.headers })).body.destination as string;

describe.each(Object.entries(surfaces))("account rules over %s", (_surface, surface) => {
  describe("NGN: NUBAN with a 3- or 5-digit institution code", () => {
    const ngn = async (account: { accountNumber: string; bankCode: string }) => {
      const tenant = await newTenant(server);
      const userId = await fundedUser(server, tenant, "NGN", "100000");
      return surface.ngn(tenant, { userId, amount: "1000", accountName: "Ada Lovelace", ...account });
    };

    it.each([
      ["a bank's 3-digit code", "058", "0123456785"],
      ["a microfinance bank's 5-digit code", "50211", "1234567897"],
      ["another 5-digit code", "50515", "9876543216"],
    ])("pays to %s with the right check digit", async (_case, bankCode, accountNumber) => {
      expect(await ngn({ bankCode, accountNumber })).toMatchObject({ status: 200, reference: expect.stringMatching(/^wd_/) });
    });

    it.each([
      ["a wrong check digit on a 3-digit code", "058", "0123456789", /accountNumber is not a valid NUBAN for bankCode/],
      ["a wrong check digit on a 5-digit code", "50211", "1234567891", /accountNumber is not a valid NUBAN for bankCode/],
      ["a 3-digit code's check digit under a 5-digit code", "00058", "0123456785", /accountNumber is not a valid NUBAN for bankCode/],
      ["a 4-digit code", "5021", "1234567897", /bankCode must be a 3-digit bank code or a 5-digit code/],
      ["a 6-digit code", "090267", "1234567897", /bankCode must be a 3-digit bank code or a 5-digit code/],
      ["a 9-digit account number", "50211", "123456789", /accountNumber must be a 10-digit NUBAN/],
    ])("refuses %s with 400 naming the field", async (_case, bankCode, accountNumber, message) => {
      const outcome = await ngn({ bankCode, accountNumber });
      expect(outcome.status).toBe(400);
      expect(outcome.error).toMatch(message);
    });
  });

  describe("BRL: Pix key or bank account, taxId", () => {
    const brl = async (fields: Record<string, unknown>) => {
      const tenant = await newTenant(server);
      const userId = await fundedUser(server, tenant, "BRL", "1000");
      return { tenant, outcome: await surface.bank(tenant, "BRL", { userId, ...HOLDER, amount: "10", ...fields }) };
    };

    it.each([
      ["CPF", "529.982.247-25", "Pix CPF ***.982.247-**"],
      ["CNPJ", "11.222.333/0001-81", "Pix CNPJ ****0181"],
      ["CNPJ", "12.ABC.345/01DE-35", "Pix CNPJ ****DE35"],
      ["EMAIL", "Ada@Example.com", "Pix EMAIL a***@example.com"],
      ["PHONE", "+5511987654321", "Pix PHONE +55*******4321"],
      ["EVP", "123e4567-e89b-42d3-a456-426614174000", "Pix EVP ****4000"],
    ])("pays to a %s key (%s), shown masked everywhere", async (keyType, key, masked) => {
      const { tenant, outcome } = await brl({ pix: { keyType, key }, taxId: CPF });
      expect(outcome.status, outcome.error).toBe(200);
      expect(await destinationOf(tenant, outcome.reference!)).toBe(masked);
      const [event] = await waitForEvents(server, tenant, 1, "&type=withdrawal.created");
      expect(event.data.object.destination).toBe(masked);
      // Neither the key nor the tax id appears whole in what the client can read.
      expect(JSON.stringify(event)).not.toContain(CPF);
      expect(JSON.stringify(event)).not.toContain(key.replace(/\D/g, "").length >= 11 ? key.replace(/\D/g, "") : key);
    });

    it.each([
      ["CPF", "52998224724"],
      ["CPF", "111.111.111-11"],
      ["CNPJ", "11222333000182"],
      ["EMAIL", "ada.example.com"],
      ["PHONE", "11987654321"],
      ["PHONE", "+551133334444"],
      ["EVP", "123E4567-E89B-42D3-A456-426614174000"],
    ])("refuses a %s key %s with 400 naming pix.key", async (keyType, key) => {
      const { outcome } = await brl({ pix: { keyType, key }, taxId: CPF });
      expect(outcome.status).toBe(400);
      expect(outcome.error).toMatch(new RegExp(`pix\\.key must be .* for keyType ${keyType}`));
    });

    it.each([
      ["a Pix key without taxId", { pix: { keyType: "EVP", key: "123e4567-e89b-42d3-a456-426614174000" } }, /taxId is required with pix/],
      ["a taxId with a wrong CPF check digit", { pix: { keyType: "EMAIL", key: "ada@example.com" }, taxId: "52998224724" }, /taxId must be a CPF .* with valid check digits/],
      ["a taxId with a wrong CNPJ check digit", { pix: { keyType: "EMAIL", key: "ada@example.com" }, taxId: "11222333000180" }, /taxId must be a CPF .* with valid check digits/],
      ["a bad taxId beside a bank account", { bankAccount: BANK_ACCOUNTS.BRL, taxId: "123" }, /taxId must be a CPF/],
      ["both a Pix key and a bank account", { pix: { keyType: "CPF", key: CPF }, taxId: CPF, bankAccount: BANK_ACCOUNTS.BRL }, /either pix or bankAccount, not both/],
      ["neither a Pix key nor a bank account", { taxId: CPF }, /bankAccount or pix is required/],
    ])("refuses %s with 400 naming the field", async (_case, fields, message) => {
      const { outcome } = await brl(fields);
      expect(outcome.status).toBe(400);
      expect(outcome.error).toMatch(message);
    });

    it("refuses an unknown keyType with 400 naming pix.keyType", async () => {
      const { outcome } = await brl({ pix: { keyType: "IBAN", key: "x" }, taxId: CPF });
      expect(outcome.status).toBe(400);
      expect(outcome.error).toMatch(/keyType/);
    });

    it("pays to a bank account without taxId as before, and with a valid CPF or CNPJ taxId", async () => {
      for (const taxId of [undefined, CPF, "11.222.333/0001-81"]) {
        const { tenant, outcome } = await brl({ bankAccount: BANK_ACCOUNTS.BRL, ...(taxId ? { taxId } : {}) });
        expect(outcome.status, outcome.error).toBe(200);
        expect(await destinationOf(tenant, outcome.reference!)).toBe("****6789");
      }
    });
  });

  it.each([
    ["a Pix key", { pix: { keyType: "CPF", key: CPF }, taxId: CPF }, /pix: only BRL withdrawals take a Pix key/],
    ["a taxId", { bankAccount: BANK_ACCOUNTS.USD, taxId: CPF }, /taxId: only BRL withdrawals take a taxId/],
    ["no bank account", {}, /bankAccount is required/],
  ])("refuses a USD withdrawal with %s", async (_case, fields, message) => {
    const tenant = await newTenant(server);
    const userId = await fundedUser(server, tenant, "USD", "100");
    const outcome = await surface.bank(tenant, "USD", { userId, ...HOLDER, amount: "10", ...fields });
    expect(outcome.status).toBe(400);
    expect(outcome.error).toMatch(message);
  });
});

it("REST takes the Pix keyType in any case, like other codes", async () => {
  const tenant = await newTenant(server);
  const userId = await fundedUser(server, tenant, "BRL", "100");
  const res = await rest(server, "POST", "/v1/withdrawal/brl", {
    headers: tenant.headers,
    body: { userId, ...HOLDER, amount: 10, pix: { keyType: "email", key: "ada@example.com" }, taxId: CPF },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body).toMatchObject({ success: true, currency: "BRL", status: "PENDING" });
});
