import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, newTenant, type Tenant, type TestServer } from "./support/server.js";
import { createUser, rest } from "./support/http.js";
import { balancesOf, depositsOf, ledgerOf, newVirtualAccount, postWebhook, providerSecret, signature } from "./support/deposits.js";

const ETHEREUM_USDC = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48";
const ETHEREUM_DAI = "0x6B175474E89094C44Da98b954EedeAC495271d0F";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

const eventId = () => `evt_${crypto.randomUUID()}`;
const now = () => Math.floor(Date.now() / 1000);

/** A user with an NGN virtual account, and a received-payment event addressed to it. */
async function ngnSetup() {
  const tenant = await newTenant(server);
  const userId = await createUser(server, tenant);
  const account = await newVirtualAccount(server, tenant, userId, "NGN");
  const reference = `ref_${crypto.randomUUID()}`;
  const received = {
    id: eventId(),
    type: "deposit.received",
    data: { reference, accountNumber: account.accountNumber, amount: "15000.25", currency: "NGN", paymentReference: "NIP000111" },
  };
  return { tenant, userId, account, reference, received };
}

const completed = (reference: string) => ({ id: eventId(), type: "deposit.completed", data: { reference } });

async function snapshot(tenant: Tenant, userId: string) {
  return { deposits: await depositsOf(server, tenant, userId), ledger: await ledgerOf(server, tenant, userId), balances: await balancesOf(server, tenant, userId) };
}

describe("POST /v1/webhooks/{provider} signatures", () => {
  it("accepts a correctly signed event without any API key and records the PENDING deposit", async () => {
    const { tenant, userId, reference, received } = await ngnSetup();
    const res = await postWebhook(server, "sandbox-ngn", received);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: true });
    const [deposit] = await depositsOf(server, tenant, userId);
    expect(deposit).toMatchObject({ eventId: reference, amount: 15000.25, currency: "NGN", status: "PENDING", paymentReference: "NIP000111" });
  });

  it.each([
    ["a wrong signature", () => `t=${now()},v1=${"ab".repeat(32)}`],
    ["a signature made with another secret", (body: string) => signature("another-secret-of-at-least-32-chars!!", body)],
    ["a timestamp older than 5 minutes", (body: string, secret: string) => signature(secret, body, now() - 301)],
    ["a timestamp more than 5 minutes ahead", (body: string, secret: string) => signature(secret, body, now() + 301)],
    ["a malformed header", () => "v1=abc"],
    ["no header", () => null],
    ["a signature made with WEBHOOK_SECRET itself", (body: string) => signature(server.app.services.config.webhookSecret, body)],
    ["a signature made with another provider's secret", (body: string) => signature(providerSecret(server, "sandbox-fiat"), body)],
    ["a valid signature followed by non-hex characters", (body: string, secret: string) => `${signature(secret, body)}zz`],
    ["a valid signature in upper case", (body: string, secret: string) => signature(secret, body).replace(/v1=(\w+)/, (_m, hex: string) => `v1=${hex.toUpperCase()}`)],
    ["a valid signature cut short", (body: string, secret: string) => signature(secret, body).slice(0, -2)],
    ["a valid signature with extra hex digits", (body: string, secret: string) => `${signature(secret, body)}00`],
    ["a timestamp with non-digits", (body: string, secret: string) => signature(secret, body).replace(/^t=(\d+)/, "t=$1.0")],
    ["two timestamps", (body: string, secret: string) => `t=${now()},${signature(secret, body)}`],
    ["an unknown part", (body: string, secret: string) => `${signature(secret, body)},v0=abc`],
  ])("refuses %s with 401 and changes nothing", async (_name, header) => {
    const { tenant, userId, received } = await ngnSetup();
    const rawBody = JSON.stringify(received);
    const res = await postWebhook(server, "sandbox-ngn", rawBody, { header: header(rawBody, providerSecret(server, "sandbox-ngn")) });
    expect(res.status).toBe(401);
    expect(res.body.error).toEqual(expect.any(String));
    expect(await depositsOf(server, tenant, userId)).toEqual([]);
  });

  it("refuses a body changed after signing", async () => {
    const { tenant, userId, received } = await ngnSetup();
    const header = signature(providerSecret(server, "sandbox-ngn"), JSON.stringify(received));
    const tampered = JSON.stringify({ ...received, data: { ...received.data, amount: "9999999.00" } });
    expect((await postWebhook(server, "sandbox-ngn", tampered, { header })).status).toBe(401);
    expect(await depositsOf(server, tenant, userId)).toEqual([]);
  });

  it("signs the raw bytes: a body that is not UTF-8 passes the signature (and is then a 400), and one changed byte fails it", async () => {
    const body = Buffer.concat([Buffer.from(`{"id":"${eventId()}","type":"deposit.completed","data":{"reference":"ref-`), Buffer.from([0xff]), Buffer.from(`"}}`)]);
    const header = signature(providerSecret(server, "sandbox-ngn"), body);
    const post = (bytes: Buffer) =>
      fetch(`${server.url}/v1/webhooks/sandbox-ngn`, { method: "POST", headers: { "content-type": "application/json", "x-webhook-signature": header }, body: new Uint8Array(bytes) });
    const signed = await post(body);
    expect(signed.status).toBe(400);
    expect((await signed.json()).error).toMatch(/UTF-8/);
    const changed = Buffer.from(body);
    changed[changed.indexOf(0xff)] = 0xfe;
    expect((await post(changed)).status).toBe(401);
  });

  it("accepts several v1 values (secret rotation) when one of them is right", async () => {
    const { received } = await ngnSetup();
    const rawBody = JSON.stringify(received);
    const right = signature(providerSecret(server, "sandbox-ngn"), rawBody);
    const header = `${right},v1=${"ab".repeat(32)}`;
    expect((await postWebhook(server, "sandbox-ngn", rawBody, { header })).status).toBe(200);
  });

  it("accepts a timestamp within the 5-minute window", async () => {
    const { received } = await ngnSetup();
    expect((await postWebhook(server, "sandbox-ngn", received, { timestamp: now() - 240 })).status).toBe(200);
  });

  it("answers 413 for a body over 100 kB", async () => {
    const { received } = await ngnSetup();
    const res = await postWebhook(server, "sandbox-ngn", { ...received, padding: "x".repeat(110_000) });
    expect(res.status).toBe(413);
  });

  it("answers 404 for an unknown provider", async () => {
    const { received } = await ngnSetup();
    for (const provider of ["acme-bank", "constructor"]) {
      const res = await postWebhook(server, provider, received);
      expect(res.status, provider).toBe(404);
      expect(res.body.error).toEqual(expect.any(String));
    }
  });
});

describe("POST /v1/webhooks/{provider} bodies", () => {
  it.each([
    ["malformed JSON", "{not json"],
    ["an unknown event type", { id: "evt_1", type: "deposit.exploded", data: {} }],
    ["a missing event id", { type: "deposit.completed", data: { reference: "r" } }],
    ["a missing account number", { id: "evt_2", type: "deposit.received", data: { reference: "r", amount: "1", currency: "NGN" } }],
  ])("answers 400 for %s", async (_name, body) => {
    const res = await postWebhook(server, "sandbox-ngn", body);
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual(expect.any(String));
  });

  it.each([
    ["zero", "0"],
    ["negative", "-10"],
    ["more decimals than NGN has", "10.001"],
  ])("answers 400 for a %s amount", async (_name, amount) => {
    const { tenant, userId, received } = await ngnSetup();
    const res = await postWebhook(server, "sandbox-ngn", { ...received, data: { ...received.data, amount } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/amount/);
    expect(await depositsOf(server, tenant, userId)).toEqual([]);
  });

  it("answers 400 when the currency is not the account's, and 404 for an account the provider does not know", async () => {
    const { received } = await ngnSetup();
    expect((await postWebhook(server, "sandbox-ngn", { ...received, data: { ...received.data, currency: "USD" } })).status).toBe(400);
    expect((await postWebhook(server, "sandbox-fiat", received)).status).toBe(404);
    expect((await postWebhook(server, "sandbox-ngn", { ...received, data: { ...received.data, accountNumber: "0000000000" } })).status).toBe(404);
  });

  it("answers 404 for a completion of an unknown deposit, and the event can still take effect later", async () => {
    const { tenant, userId, reference, received } = await ngnSetup();
    const early = completed(reference);
    expect((await postWebhook(server, "sandbox-ngn", early)).status).toBe(404);
    await postWebhook(server, "sandbox-ngn", received);
    const retried = await postWebhook(server, "sandbox-ngn", early);
    expect(retried.body).toEqual({ received: true });
    expect((await depositsOf(server, tenant, userId))[0].status).toBe("COMPLETED");
  });
});

describe("exactly once", () => {
  it("a replayed event changes nothing: same deposit, same ledger, same balances", async () => {
    const { tenant, userId, reference, received } = await ngnSetup();
    expect((await postWebhook(server, "sandbox-ngn", received)).body).toEqual({ received: true });
    expect((await postWebhook(server, "sandbox-ngn", received)).body).toEqual({ received: true, duplicate: true });
    const completion = completed(reference);
    expect((await postWebhook(server, "sandbox-ngn", completion)).body).toEqual({ received: true });
    const before = await snapshot(tenant, userId);
    expect(before.deposits).toHaveLength(1);
    expect(before.deposits[0].status).toBe("COMPLETED");
    expect(before.ledger.filter((e) => e.type === "DEPOSIT")).toHaveLength(1);

    const replays = await Promise.all([1, 2, 3].map(() => postWebhook(server, "sandbox-ngn", completion)));
    expect(replays.map((r) => r.body)).toEqual([1, 2, 3].map(() => ({ received: true, duplicate: true })));
    expect(await snapshot(tenant, userId)).toEqual(before);
  });

  it("concurrent deliveries of one completion apply it once", async () => {
    const { tenant, userId, reference, received } = await ngnSetup();
    await postWebhook(server, "sandbox-ngn", received);
    const completion = completed(reference);
    const results = await Promise.all([1, 2, 3, 4, 5].map(() => postWebhook(server, "sandbox-ngn", completion)));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(results.filter((r) => r.body.duplicate)).toHaveLength(4);
    expect((await ledgerOf(server, tenant, userId)).filter((e) => e.type === "DEPOSIT")).toHaveLength(1);
  });

  it("a second completion event with its own id changes nothing, and a failure after completion neither", async () => {
    const { tenant, userId, reference, received } = await ngnSetup();
    await postWebhook(server, "sandbox-ngn", received);
    await postWebhook(server, "sandbox-ngn", completed(reference));
    const before = await snapshot(tenant, userId);
    expect((await postWebhook(server, "sandbox-ngn", completed(reference))).body).toEqual({ received: true });
    expect((await postWebhook(server, "sandbox-ngn", { id: eventId(), type: "deposit.failed", data: { reference } })).status).toBe(200);
    expect(await snapshot(tenant, userId)).toEqual(before);
  });

  it("a second received event for the same payment reference creates no second deposit", async () => {
    const { tenant, userId, received } = await ngnSetup();
    await postWebhook(server, "sandbox-ngn", received);
    expect((await postWebhook(server, "sandbox-ngn", { ...received, id: eventId() })).status).toBe(200);
    expect(await depositsOf(server, tenant, userId)).toHaveLength(1);
  });
});

describe("on-chain watcher", () => {
  async function chainSetup() {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    const wallet = await rest(server, "POST", "/v1/wallet", { headers: tenant.headers, body: { userId } });
    const transactionHash = `0x${"1f".repeat(32)}`;
    const received = {
      id: eventId(),
      type: "deposit.received",
      data: {
        reference: `${transactionHash}:${Math.floor(Math.random() * 1e9)}`,
        address: (wallet.body.address as string).toLowerCase(),
        amount: "100.000001",
        currency: "USDC",
        tokenAddress: ETHEREUM_USDC.toLowerCase(),
        transactionHash,
        chainId: 1,
      },
    };
    return { tenant, userId, received };
  }

  it("credits a USDC transfer to the user's wallet (address matched in any case)", async () => {
    const { tenant, userId, received } = await chainSetup();
    expect((await postWebhook(server, "sandbox-chain", received)).status).toBe(200);
    expect((await postWebhook(server, "sandbox-chain", completed(received.data.reference))).status).toBe(200);
    const [deposit] = await depositsOf(server, tenant, userId);
    expect(deposit).toMatchObject({ status: "COMPLETED", currency: "USDC", amount: 100.000001, tokenAddress: ETHEREUM_USDC, chainId: 1 });
    expect(await balancesOf(server, tenant, userId)).toEqual({ USDC: "100.000001" });
  });

  it("refuses a JSON-number amount longer than a double keeps exactly (400): it must come as a string", async () => {
    const { tenant, userId, received } = await chainSetup();
    // JSON.parse reads this DAI amount as 0.12345678901234568: not the amount the provider sent.
    const rawBody = JSON.stringify({ ...received, data: { ...received.data, currency: "DAI", tokenAddress: ETHEREUM_DAI } }).replace(
      '"amount":"100.000001"',
      '"amount":0.123456789012345678',
    );
    const res = await postWebhook(server, "sandbox-chain", rawBody);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/amount .*send it as a string/);
    expect(await depositsOf(server, tenant, userId)).toEqual([]);
  });

  it("refuses another token contract (400), an unsupported chain (400) and an unknown address (404)", async () => {
    const { tenant, userId, received } = await chainSetup();
    const variant = (data: Record<string, unknown>) => ({ ...received, id: eventId(), data: { ...received.data, ...data } });
    expect((await postWebhook(server, "sandbox-chain", variant({ tokenAddress: "0x0000000000000000000000000000000000000001" }))).status).toBe(400);
    expect((await postWebhook(server, "sandbox-chain", variant({ chainId: 56 }))).status).toBe(400);
    expect((await postWebhook(server, "sandbox-chain", variant({ address: "0x000000000000000000000000000000000000dEaD" }))).status).toBe(404);
    expect(await depositsOf(server, tenant, userId)).toEqual([]);
  });
});

describe("WEBHOOK_SECRET_<PROVIDER>", () => {
  const NGN_SECRET = "a-secret-given-to-the-ngn-bank-only-0123456789";

  it("replaces the derived secret of that provider only", async () => {
    const configured = await startServer({ env: { WEBHOOK_SECRET_SANDBOX_NGN: NGN_SECRET } });
    try {
      const tenant = await newTenant(configured);
      const userId = await createUser(configured, tenant);
      const account = await newVirtualAccount(configured, tenant, userId, "NGN");
      const received = () => ({
        id: eventId(),
        type: "deposit.received",
        data: { reference: `ref_${crypto.randomUUID()}`, accountNumber: account.accountNumber, amount: "10.00", currency: "NGN" },
      });
      const send = (secret: string) => {
        const rawBody = JSON.stringify(received());
        return postWebhook(configured, "sandbox-ngn", rawBody, { header: signature(secret, rawBody) }).then((res) => res.status);
      };
      expect(await send(NGN_SECRET)).toBe(200);
      expect(await send(providerSecret(configured, "sandbox-ngn"))).toBe(401);
      const completedBody = JSON.stringify(completed(`ref_${crypto.randomUUID()}`));
      const fiat = await postWebhook(configured, "sandbox-fiat", completedBody, { header: signature(NGN_SECRET, completedBody) });
      expect(fiat.status).toBe(401);
    } finally {
      await configured.stop();
    }
  });
});
