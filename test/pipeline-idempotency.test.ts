import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SandboxCardIssuer, type CardHolder } from "../src/providers/card-issuer.js";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";
import { createUser, rest, userInput, type HttpResult } from "./support/http.js";
import { signIn, startMailbox, type Mailbox } from "./support/mailbox.js";
import { balanceOf, fundedUser, USDC_ADDRESS } from "./support/withdrawals.js";
import { codesOf, connectWs, expectRestError, dumpDatabase, GRAPHQL_ENCODINGS, postGraphql, type GraphqlResult } from "./support/pipeline.js";

/** The card issuer (an external party) fails for holders named "Failing", and counts every call it gets. */
const issuer = new SandboxCardIssuer();
const issuerCalls: CardHolder[] = [];
const countingIssuer = {
  issueCard(holder: CardHolder) {
    issuerCalls.push(holder);
    return holder.firstName === "Failing" ? Promise.reject(new Error("issuer down")) : issuer.issueCard(holder);
  },
};

let server: TestServer;
let mailbox: Mailbox;
beforeAll(async () => {
  mailbox = await startMailbox();
  server = await startServer({ env: { SMTP_URL: mailbox.smtpUrl }, providers: { cardIssuer: countingIssuer } });
});
afterAll(async () => {
  await server?.stop();
  await mailbox?.close();
});

const newKey = () => `pipeline-${crypto.randomUUID()}`;

/** What one keyed operation came back with, on any transport (websockets have no status or headers). */
type Sent = { status?: number; result: GraphqlResult; replayed?: boolean };
type Transport = { name: string; send(tenant: Tenant, key: string, query: string, variables?: Record<string, unknown>): Promise<Sent> };

const overHttp = (res: HttpResult<GraphqlResult>): Sent => ({
  status: res.status,
  result: res.body,
  replayed: res.headers.get("idempotent-replayed") === "true",
});

const HTTP_TRANSPORTS: Transport[] = GRAPHQL_ENCODINGS.map((encoding) => ({
  name: `GraphQL POST ${encoding}`,
  send: async (tenant, key, query, variables) =>
    overHttp(await postGraphql(server, encoding, query, { variables, headers: { ...tenant.headers, "idempotency-key": key } })),
}));

const WEBSOCKET: Transport = {
  name: "graphql-ws",
  async send(tenant, key, query, variables) {
    const connection = connectWs(server, { "x-api-key": tenant.apiKey });
    try {
      const [result] = await connection.run({ query, variables, extensions: { idempotencyKey: key } });
      return { result };
    } finally {
      await connection.dispose();
    }
  },
};

/** A mutation over SSE (Accept: text/event-stream): its one result is the first `data:` event. */
const SSE: Transport = {
  name: "GraphQL POST SSE",
  async send(tenant, key, query, variables) {
    const response = await fetch(`${server.url}/graphql`, {
      method: "POST",
      headers: { ...tenant.headers, "content-type": "application/json", accept: "text/event-stream", "idempotency-key": key },
      body: JSON.stringify({ query, variables }),
    });
    const text = await response.text();
    const data = /^data: (\{.*\})$/m.exec(text)?.[1];
    return { result: data ? JSON.parse(data) : { errors: [{ message: text }] }, replayed: response.headers.get("idempotent-replayed") === "true" };
  },
};

const TRANSPORTS = [...HTTP_TRANSPORTS, SSE, WEBSOCKET];

/** Documents carry their values inline, so the same text works as application/graphql too. */
const withdrawUsdc = (userId: string, amount: string) =>
  `mutation { withdrawUsdc(input: { userId: "${userId}", amount: "${amount}", walletAddress: "${USDC_ADDRESS}", network: ETHEREUM, chainId: 1 }) { reference amount status } }`;

const createUserDocument = (overrides: Record<string, string> = {}) => {
  const input = { ...userInput(), ...overrides } as Record<string, string>;
  const fields = Object.entries(input).map(([name, value]) => `${name}: ${JSON.stringify(value)}`);
  return `mutation { createUser(input: { ${fields.join(", ")} }) { id email } }`;
};

/** The issue's exploit: a 10 USDC withdrawal beside a createUser refused for its e-mail, in one keyed document. */
const withdrawalBesideInvalidUser = (userId: string) =>
  withdrawUsdc(userId, "10").replace(/ \}$/, ` ${createUserDocument({ email: "not-an-email" }).replace(/^mutation \{ /, "")}`);

/**
 * Refused before acting: errors and no data (a request error is a 400; a field error a 200 with
 * `data: null`). The codes of request errors are checked in pipeline-auth-first.test.ts.
 */
function expectRefused(sent: Sent, status = 400, code: string | null = "BAD_USER_INPUT") {
  if (sent.status !== undefined) expect(sent.status, JSON.stringify(sent.result)).toBe(status);
  expect(sent.result.errors?.length, JSON.stringify(sent.result)).toBeGreaterThan(0);
  if (code) expect(codesOf(sent.result), JSON.stringify(sent.result)).toContain(code);
  expect(sent.result.data ?? null).toBeNull();
}

function expectRan(sent: Sent) {
  if (sent.status !== undefined) expect(sent.status, JSON.stringify(sent.result)).toBe(200);
  expect(sent.result.errors, JSON.stringify(sent.result)).toBeUndefined();
  expect(sent.replayed ?? false).toBe(false);
}

describe.each(TRANSPORTS)("a keyed mutation over $name", (transport) => {
  it("holding two mutation fields (a withdrawal beside an invalid createUser) is refused 3 times and moves no money", async () => {
    const tenant = await newTenant(server);
    const userId = await fundedUser(server, tenant, "USDC", "100");
    const key = newKey();
    const document = withdrawalBesideInvalidUser(userId);
    expect(document).toMatch(/withdrawUsdc[^]*createUser/);
    const answers: Sent[] = [];
    for (let attempt = 0; attempt < 3; attempt++) answers.push(await transport.send(tenant, key, document));
    expect(await balanceOf(server, tenant, userId, "USDC")).toBe("100");
    expect(await server.app.db.prisma.withdrawal.count({ where: { userId } })).toBe(0);
    for (const answer of answers) expectRefused(answer);
  });

  it("with one field runs once: the second answer is the first one, replayed", async () => {
    const tenant = await newTenant(server);
    const userId = await fundedUser(server, tenant, "USDC", "100");
    const key = newKey();
    const first = await transport.send(tenant, key, withdrawUsdc(userId, "10"));
    expectRan(first);
    const second = await transport.send(tenant, key, withdrawUsdc(userId, "10"));
    expect(second.result.errors).toBeUndefined();
    expect(second.result.data).toEqual(first.result.data);
    if (second.status !== undefined) expect(second.status).toBe(200);
    if (second.replayed !== undefined) expect(second.replayed).toBe(true);
    expect(await balanceOf(server, tenant, userId, "USDC")).toBe("90");
  });

  it("with another request under a used key is refused as IDEMPOTENCY_MISMATCH (422) and does not run", async () => {
    const tenant = await newTenant(server);
    const userId = await fundedUser(server, tenant, "USDC", "100");
    const key = newKey();
    expectRan(await transport.send(tenant, key, withdrawUsdc(userId, "10")));
    const other = await transport.send(tenant, key, withdrawUsdc(userId, "11"));
    if (other.status !== undefined) expect(other.status).toBe(422);
    expect(codesOf(other.result)).toEqual(["IDEMPOTENCY_MISMATCH"]);
    expect(await balanceOf(server, tenant, userId, "USDC")).toBe("90");
  });

  it.each([
    {
      refusal: "a document that fails validation (GRAPHQL_VALIDATION_FAILED)",
      refused: (userId: string) => withdrawUsdc(userId, "10").replace("status", "status noSuchField"),
      corrected: (userId: string) => withdrawUsdc(userId, "10"),
      status: 400,
      code: null,
    },
    {
      refusal: "a NUL character in a name",
      refused: () => createUserDocument({ firstName: "Ada\u0000" }),
      corrected: () => createUserDocument(),
      status: 400,
      code: "BAD_USER_INPUT",
    },
    {
      refusal: "an amount its service refuses (a field error, nothing written)",
      refused: (userId: string) => withdrawUsdc(userId, "10.1234567"),
      corrected: (userId: string) => withdrawUsdc(userId, "10"),
      status: 200,
      code: "BAD_USER_INPUT",
    },
  ])("refused for $refusal does not burn the key: the corrected request runs under it", async ({ refused, corrected, status, code }) => {
    const tenant = await newTenant(server);
    const userId = await fundedUser(server, tenant, "USDC", "100");
    const key = newKey();
    expectRefused(await transport.send(tenant, key, refused(userId)), status, code);
    const fixed = await transport.send(tenant, key, corrected(userId));
    expectRan(fixed);
    expect(fixed.result.data).toBeTruthy();
  });
});

describe("keys and variables", () => {
  it.each([...HTTP_TRANSPORTS.filter((t) => t.name !== "GraphQL POST graphql"), WEBSOCKET])(
    "a request whose variables do not coerce does not burn the key over $name",
    async (transport) => {
      const tenant = await newTenant(server);
      const userId = await fundedUser(server, tenant, "USDC", "100");
      const key = newKey();
      const query = `mutation ($input: WithdrawUsdcInput!) { withdrawUsdc(input: $input) { reference } }`;
      const input = { userId, amount: "10", walletAddress: USDC_ADDRESS, network: "ETHEREUM", chainId: 1 };
      expectRefused(await transport.send(tenant, key, query, { input: { ...input, chainId: "one" } }));
      expectRan(await transport.send(tenant, key, query, { input }));
      expect(await balanceOf(server, tenant, userId, "USDC")).toBe("90");
    },
  );

  it.each([{ key: 12345 }, { key: { id: "k" } }, { key: "" }])("a websocket idempotencyKey that is not a key ($key) is refused, not ignored", async ({ key }) => {
    const tenant = await newTenant(server);
    const userId = await fundedUser(server, tenant, "USDC", "100");
    const answers: GraphqlResult[] = [];
    for (let attempt = 0; attempt < 2; attempt++) {
      const connection = connectWs(server, { "x-api-key": tenant.apiKey });
      try {
        answers.push(...(await connection.run({ query: withdrawUsdc(userId, "10"), extensions: { idempotencyKey: key } })));
      } finally {
        await connection.dispose();
      }
    }
    expect(await balanceOf(server, tenant, userId, "USDC")).toBe("100");
    for (const answer of answers) expect(codesOf(answer), JSON.stringify(answer)).toEqual(["BAD_USER_INPUT"]);
  });

  it("REST: a name with a NUL is a 400 that leaves the key free for the corrected request", async () => {
    const tenant = await newTenant(server);
    const key = newKey();
    const headers = { ...tenant.headers, "idempotency-key": key };
    const refused = await rest(server, "POST", "/v1/user", { headers, body: userInput({ firstName: "Ada\u0000" }) });
    expect(refused.status).toBe(400);
    expectRestError(refused.body);
    const fixed = await rest(server, "POST", "/v1/user", { headers, body: userInput() });
    expect(fixed.status).toBe(201);
    expect(fixed.headers.get("idempotent-replayed")).toBeNull();
  });
});

/**
 * The issue's three reproductions: a nested field's refusal nulls the root field. The first two act
 * before the nested field refuses; the connection's arguments are checked before createUser's
 * resolver runs, so that one is refused before it acts (and nothing is created).
 */
const NESTED_REFUSALS = [
  {
    mutation: "createWebhookEndpoint{… deliveries(limit: 0)}",
    acts: true,
    prepare: async () => undefined,
    document: () => `mutation { createWebhookEndpoint(input: { url: "https://hooks.example.com/orders" }) { id secret deliveries(limit: 0) { id } } }`,
    effect: (tenant: Tenant) => server.app.db.prisma.webhookEndpoint.findMany({ where: { clientId: tenant.clientId }, select: { id: true } }),
  },
  {
    mutation: "rotateWebhookEndpointSecret{… deliveries(limit: 0)}",
    acts: true,
    prepare: async (tenant: Tenant) => (await server.app.services.webhookEndpoints.create({ clientId: tenant.clientId, permissions: null }, { url: "https://hooks.example.com/orders" })).id,
    document: (endpointId?: string) => `mutation { rotateWebhookEndpointSecret(id: "${endpointId}") { id secret deliveries(limit: 0) { id } } }`,
    // Each rotation moves the current secret to previousSecretEnc: a second rotation would change both.
    effect: (tenant: Tenant) => server.app.db.prisma.webhookEndpoint.findMany({ where: { clientId: tenant.clientId }, select: { secretEnc: true, previousSecretEnc: true } }),
  },
  {
    mutation: "createUser{… ledger(first: -1)}",
    acts: false,
    prepare: async () => undefined,
    document: () => createUserDocument().replace("{ id email }", "{ id email ledger(first: -1) { edges { cursor } } }"),
    effect: (tenant: Tenant) => server.app.db.prisma.user.findMany({ where: { clientId: tenant.clientId }, select: { id: true } }),
  },
];

describe("a keyed mutation whose nested field refuses", () => {
  it.each(NESTED_REFUSALS)("$mutation: three tries act at most once, and an answer that acted replays", async ({ acts, prepare, document, effect }) => {
    const tenant = await newTenant(server);
    const text = document(await prepare(tenant));
    const key = newKey();
    const before = await effect(tenant);
    const first = await HTTP_TRANSPORTS[0].send(tenant, key, text);
    expect(codesOf(first.result), JSON.stringify(first.result)).toEqual(["BAD_USER_INPUT"]);
    const afterFirst = await effect(tenant);
    if (acts) expect(afterFirst, "the first try acted").not.toEqual(before);
    else expect(afterFirst, "the first try was refused before it acted").toEqual(before);
    for (let retry = 0; retry < 2; retry++) {
      const again = await HTTP_TRANSPORTS[0].send(tenant, key, text);
      expect(again.replayed, "a try that acted is kept; one refused before acting is not").toBe(acts);
      expect(again.result.errors?.[0].message).toEqual(first.result.errors?.[0].message);
      if (acts) expect(again.result).toEqual(first.result);
    }
    expect(await effect(tenant), "the retries changed nothing").toEqual(afterFirst);
  });

  it("a root field that refuses after it wrote (a wrong OTP uses up a try) keeps its key: the retry replays and uses no other try", async () => {
    const tenant = await newTenant(server);
    const email = `keyed-otp-${crypto.randomUUID()}@example.com`;
    await postGraphql(server, "json", `mutation { requestOtp(email: "${email}") { expiresAt } }`);
    const code = await mailbox.codeFor(email);
    const wrong = code === "000000" ? "000001" : "000000";
    const key = newKey();
    const verify = `mutation { verifyOtp(email: "${email}", otp: "${wrong}") { token } }`;
    const first = await HTTP_TRANSPORTS[0].send(tenant, key, verify);
    expect(codesOf(first.result)).toEqual(["UNAUTHENTICATED"]);
    const retry = await HTTP_TRANSPORTS[0].send(tenant, key, verify);
    expect(retry.replayed).toBe(true);
    expect(retry.result).toEqual(first.result);
    const otp = await server.app.db.prisma.otpCode.findFirstOrThrow({ where: { email } });
    expect(otp.attempts).toBe(1);
  });
});

describe("extensions.idempotencyKey over HTTP", () => {
  const postWithExtension = (tenant: Tenant, query: string, extensions: Record<string, unknown>, headers: Record<string, string> = {}) =>
    fetch(`${server.url}/graphql`, {
      method: "POST",
      headers: { ...tenant.headers, ...headers, "content-type": "application/json" },
      body: JSON.stringify({ query, extensions }),
    }).then(async (res) => ({ status: res.status, replayed: res.headers.get("idempotent-replayed") === "true", result: (await res.json()) as GraphqlResult }));

  it("is honoured like the header on POST: three tries move the money once and the first answer replays", async () => {
    const tenant = await newTenant(server);
    const userId = await fundedUser(server, tenant, "USDC", "100");
    const extensions = { idempotencyKey: newKey() };
    const first = await postWithExtension(tenant, withdrawUsdc(userId, "10"), extensions);
    expectRan(first);
    for (let retry = 0; retry < 2; retry++) {
      const again = await postWithExtension(tenant, withdrawUsdc(userId, "10"), extensions);
      expect(again.replayed).toBe(true);
      expect(again.result).toEqual(first.result);
    }
    const byHeader = await HTTP_TRANSPORTS[0].send(tenant, extensions.idempotencyKey, withdrawUsdc(userId, "10"));
    expect(byHeader.replayed, "the header and the extension name the same key").toBe(true);
    expect(await balanceOf(server, tenant, userId, "USDC")).toBe("90");
  });

  it.each([
    { case: "a key that is not a string", extensions: { idempotencyKey: 12345 }, headers: {} },
    { case: "a key that differs from the header's", extensions: { idempotencyKey: "one-key" }, headers: { "idempotency-key": "another-key" } as Record<string, string> },
  ])("is refused 400 for $case, and nothing runs", async ({ extensions, headers }) => {
    const tenant = await newTenant(server);
    const userId = await fundedUser(server, tenant, "USDC", "100");
    const answer = await postWithExtension(tenant, withdrawUsdc(userId, "10"), extensions, headers);
    expectRefused(answer);
    expect(await balanceOf(server, tenant, userId, "USDC")).toBe("100");
  });

  it("cannot carry a mutation over GET (405), keyed or not: nothing runs", async () => {
    const tenant = await newTenant(server);
    const userId = await fundedUser(server, tenant, "USDC", "100");
    const params = new URLSearchParams({ query: withdrawUsdc(userId, "10"), extensions: JSON.stringify({ idempotencyKey: newKey() }) });
    const res = await fetch(`${server.url}/graphql?${params}`, { headers: tenant.headers });
    expect(res.status).toBe(405);
    expect(await balanceOf(server, tenant, userId, "USDC")).toBe("100");
  });
});

describe("errors that may have acted", () => {
  it.each([
    { surface: "REST POST /v1/virtual-cards", send: (t: Tenant, key: string, userId: string) => rest(server, "POST", "/v1/virtual-cards", { headers: { ...t.headers, "idempotency-key": key }, body: { userId } }) },
    {
      surface: "GraphQL createVirtualCard",
      send: (t: Tenant, key: string, userId: string) =>
        postGraphql(server, "json", `mutation { createVirtualCard(userId: "${userId}") { id } }`, { headers: { ...t.headers, "idempotency-key": key } }),
    },
  ])("a keyed mutation that failed at a provider is kept over $surface: the retry is a replay and the provider is not called again", async ({ send }) => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant, { firstName: "Failing" });
    const key = newKey();
    const callsBefore = issuerCalls.length;
    const first = await send(tenant, key, userId);
    // REST answers the provider's failure with a 500, GraphQL with a PROVIDER_ERROR field error.
    expect(first.status >= 500 || codesOf(first.body).includes("PROVIDER_ERROR"), JSON.stringify(first.body)).toBe(true);
    const retry = await send(tenant, key, userId);
    expect(issuerCalls.length - callsBefore).toBe(1);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.status).toBe(first.status);
    expect(retry.body, "the replay is the first answer as it was sent (error locations included)").toEqual(first.body);
  });
});

describe("stored results", () => {
  it("hold no API key, card number, CVV or OTP in plain text anywhere in the database, while replays still return them", async () => {
    const tenant = await newTenant(server);
    const session = await signIn(server, mailbox);
    const [userA, userB] = [await fundedUser(server, tenant, "USD", "1"), await fundedUser(server, tenant, "USD", "1")];
    const replays: { first: HttpResult; replay: HttpResult }[] = [];
    const keyed = async (call: (key: string) => Promise<HttpResult>) => {
      const key = newKey();
      const first = await call(key);
      expect(first.status, JSON.stringify(first.body)).toBeLessThan(300);
      replays.push({ first, replay: await call(key) });
      return first.body;
    };
    const withKey = (key: string, headers: Record<string, string> = tenant.headers) => ({ ...headers, "idempotency-key": key });

    const restKey = await keyed((key) => rest(server, "POST", "/v1/api-keys", { headers: withKey(key) }));
    const sessionKey = await keyed((key) => rest(server, "POST", "/v1/api-keys", { headers: withKey(key, session.headers) }));
    const gqlKey = (await keyed((key) => postGraphql(server, "json", "mutation { createApiKey { id key } }", { headers: withKey(key) }))).data.createApiKey;
    const postedCard = await keyed((key) => rest(server, "POST", "/v1/virtual-cards", { headers: withKey(key), body: { userId: userA } }));
    const gotCard = await keyed((key) => rest(server, "GET", `/v1/virtual-cards/${userB}`, { headers: withKey(key) }));
    const otpEmails = [`otp-${crypto.randomUUID()}@example.com`, `otp-${crypto.randomUUID()}@example.com`];
    await keyed((key) => rest(server, "POST", "/v1/client-auth/otp", { headers: withKey(key), body: { email: otpEmails[0] } }));
    await keyed((key) => postGraphql(server, "json", `mutation { requestOtp(email: "${otpEmails[1]}") { message } }`, { headers: withKey(key) }));
    const otpCodes = await Promise.all(otpEmails.map((email) => mailbox.codeFor(email)));

    const secrets = [restKey.key, sessionKey.key, gqlKey.key].map((key: string) => key.split(".")[1]);
    const cards = [postedCard, gotCard] as { cardNumber: string; cardCVV: string }[];
    for (const secret of secrets) expect(secret).toMatch(/^[\w-]{40,}$/);
    for (const card of cards) expect(card.cardNumber).toMatch(/^\d{4} \d{4} \d{4} \d{4}$/);

    const dump = await dumpDatabase(server);
    expect(dump).toMatch(/idempotency_records|IdempotencyRecord/);
    for (const secret of secrets) expect(dump.includes(secret), "an API key secret is stored in plain text").toBe(false);
    for (const { cardNumber, cardCVV } of cards) {
      expect(dump.includes(cardNumber), "a card number is stored in plain text").toBe(false);
      expect(dump.includes(cardNumber.replaceAll(" ", "")), "a card number is stored in plain text").toBe(false);
      // A CVV is three digits: look for it as a whole quoted value (plain or inside stored JSON text).
      expect(new RegExp(`\\\\?"${cardCVV}\\\\?"`).test(dump), "a CVV is stored in plain text").toBe(false);
    }
    for (const code of otpCodes) expect(new RegExp(`\\b${code}\\b`).test(dump), "an OTP code is stored in plain text").toBe(false);

    for (const { first, replay } of replays) {
      expect(replay.headers.get("idempotent-replayed"), JSON.stringify(first.body)).toBe("true");
      expect(replay.body).toEqual(first.body);
    }
  });
});

describe("body size", () => {
  const threeMegabytes = "#".repeat(3 * 1024 * 1024);
  it.each([
    { encoding: "graphql", body: `{ __typename }\n${threeMegabytes}`, contentType: "application/graphql" },
    { encoding: "json", body: JSON.stringify({ query: `{ __typename }\n${threeMegabytes}` }), contentType: "application/json" },
    { encoding: "form", body: new URLSearchParams({ query: `{ __typename }\n${threeMegabytes}` }).toString(), contentType: "application/x-www-form-urlencoded" },
    {
      // A boundary that merely contains "json" must not let a body past both readers.
      encoding: "multipart",
      body: `--xjsonx\r\nContent-Disposition: form-data; name="operations"\r\n\r\n${JSON.stringify({ query: `{ __typename }\n${threeMegabytes}` })}\r\n--xjsonx--\r\n`,
      contentType: "multipart/form-data; boundary=xjsonx",
    },
  ])("a 3 MB $encoding GraphQL body is refused 413", async ({ body, contentType }) => {
    const tenant = await newTenant(server);
    const res = await fetch(`${server.url}/graphql`, { method: "POST", headers: { ...tenant.headers, "content-type": contentType }, body });
    expect(res.status).toBe(413);
  });
});
