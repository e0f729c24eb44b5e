import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { createUser, rest } from "./support/http.js";
import { fund } from "./support/ledger.js";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";

// One rule per kind of value, on every route that takes it: an amount (plain decimal notation, as a
// JSON number or a string; an exponent refused whichever carries it) and an EVM address (all-lower,
// all-upper or EIP-55 mixed case). Each value is sent, as raw JSON text, to every route of the table,
// and every route must give it the same verdict. Test mode on simulated networks: no chain needed.
let server: TestServer;
let tenant: Tenant;

beforeAll(async () => {
  server = await startServer();
  tenant = await newTenant(server, "test");
}, 240_000);

afterAll(async () => {
  await server?.stop();
});

type Verdict = { accepted: boolean; text: string };

/** A GraphQL answer as a verdict: data, or a BAD_USER_INPUT naming the field (anything else fails the test). */
function graphqlVerdict(body: { data?: Record<string, unknown> | null; errors?: { message: string; extensions?: { code?: string } }[] }, field: string): Verdict {
  if (!body.errors?.length) return { accepted: true, text: JSON.stringify(body.data) };
  expect(body.errors[0].extensions?.code, JSON.stringify(body.errors)).toBe("BAD_USER_INPUT");
  expect(body.errors[0].message, JSON.stringify(body.errors)).toContain(field);
  return { accepted: false, text: body.errors[0].message };
}

async function restVerdict(path: string, rawBody: string, field: string): Promise<Verdict> {
  const res = await rest(server, "POST", path, { headers: tenant.headers, rawBody });
  if (res.status === 200) return { accepted: true, text: JSON.stringify(res.body) };
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.param, JSON.stringify(res.body)).toBe(field);
  expect(res.body.error).toMatch(new RegExp(`^${field}`));
  return { accepted: false, text: res.body.error };
}

const graphqlOverHttp = async (query: string, variables: string, field: string) =>
  graphqlVerdict((await rest(server, "POST", "/graphql", { headers: tenant.headers, rawBody: `{"query": ${JSON.stringify(query)}, "variables": ${variables}}` })).body, field);

/** One operation over graphql-ws, its message written by hand (so a number keeps the notation it is written in). */
function graphqlOverWs(query: string, variables: string, field: string): Promise<Verdict> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${server.url.replace(/^http/, "ws")}/graphql`, "graphql-transport-ws");
    socket.on("error", reject);
    socket.on("open", () => socket.send(JSON.stringify({ type: "connection_init", payload: tenant.headers })));
    socket.on("message", (data) => {
      const message = JSON.parse(String(data)) as { type: string; payload?: unknown };
      if (message.type === "connection_ack") socket.send(`{"id": "1", "type": "subscribe", "payload": {"query": ${JSON.stringify(query)}, "variables": ${variables}}}`);
      else if (message.type === "next") resolve(graphqlVerdict(message.payload as never, field));
      else if (message.type === "error") resolve(graphqlVerdict({ errors: message.payload as never }, field));
      if (message.type === "next" || message.type === "error") socket.close();
    });
  });
}

const WITHDRAW_USDC = "mutation ($input: WithdrawUsdcInput!) { withdrawUsdc(input: $input) { amount } }";
const CREATE_ACCOUNT = "mutation ($input: CreateVirtualAccountInput!) { createVirtualAccount(input: $input) { id } }";
const OUTSIDE = "0x71C7656EC7ab88b098defB751B7401B5f6d8976F";

/** Every route that takes a withdrawal's amount, given the amount as raw JSON text. */
const amountRoutes: Record<string, (userId: string, amount: string) => Promise<Verdict>> = {
  "REST POST /v1/withdrawals/usdc": (userId, amount) =>
    restVerdict("/v1/withdrawals/usdc", `{"userId": "${userId}", "amount": ${amount}, "walletAddress": "${OUTSIDE}", "network": "ETHEREUM", "chainId": 1}`, "amount"),
  "REST POST /v1/withdrawals/ngn": (userId, amount) =>
    restVerdict("/v1/withdrawals/ngn", `{"userId": "${userId}", "amount": ${amount}, "accountNumber": "0123456785", "bankCode": "058", "accountName": "Ada Lovelace"}`, "amount"),
  "GraphQL withdrawUsdc, variables over HTTP": (userId, amount) =>
    graphqlOverHttp(WITHDRAW_USDC, `{"input": {"userId": "${userId}", "amount": ${amount}, "walletAddress": "${OUTSIDE}", "network": "ETHEREUM", "chainId": 1}}`, "amount"),
  "GraphQL withdrawUsdc, variables over graphql-ws": (userId, amount) =>
    graphqlOverWs(WITHDRAW_USDC, `{"input": {"userId": "${userId}", "amount": ${amount}, "walletAddress": "${OUTSIDE}", "network": "ETHEREUM", "chainId": 1}}`, "amount"),
  "GraphQL withdrawUsdc, a literal in the document": (userId, amount) =>
    // A literal's refusal is GraphQL's validation, which knows no field path: it says why.
    graphqlOverHttp(`mutation { withdrawUsdc(input: {userId: "${userId}", amount: ${amount}, walletAddress: "${OUTSIDE}", network: ETHEREUM, chainId: 1}) { amount } }`, "{}", "without an exponent"),
};

/** Every route that takes a virtual account's developerFeePercent (a decimal under the same rule). */
const percentRoutes: Record<string, (userId: string, percent: string) => Promise<Verdict>> = {
  "REST POST /v1/virtual-account/usd": (userId, percent) => restVerdict("/v1/virtual-account/usd", `{"userId": "${userId}", "developerFeePercent": ${percent}}`, "developerFeePercent"),
  "GraphQL createVirtualAccount, variables over HTTP": (userId, percent) =>
    graphqlOverHttp(CREATE_ACCOUNT, `{"input": {"currency": "USD", "userId": "${userId}", "developerFeePercent": ${percent}}}`, "developerFeePercent"),
  "GraphQL createVirtualAccount, variables over graphql-ws": (userId, percent) =>
    graphqlOverWs(CREATE_ACCOUNT, `{"input": {"currency": "USD", "userId": "${userId}", "developerFeePercent": ${percent}}}`, "developerFeePercent"),
};

/** Every route that takes a destination address. */
const addressRoutes: Record<string, (userId: string, address: string) => Promise<Verdict>> = {
  "REST POST /v1/withdrawals/usdc": (userId, address) =>
    restVerdict("/v1/withdrawals/usdc", JSON.stringify({ userId, amount: 1, walletAddress: address, network: "ETHEREUM", chainId: 1 }), "walletAddress"),
  "GraphQL withdrawUsdc": (userId, address) =>
    graphqlOverHttp(WITHDRAW_USDC, JSON.stringify({ input: { userId, amount: "1", walletAddress: address, network: "ETHEREUM", chainId: 1 } }), "walletAddress"),
  "REST POST /v1/virtual-account/usd": (userId, address) => restVerdict("/v1/virtual-account/usd", JSON.stringify({ userId, destinationNetwork: "BASE", address }), "address"),
  "GraphQL createVirtualAccount": (userId, address) =>
    graphqlOverHttp(CREATE_ACCOUNT, JSON.stringify({ input: { currency: "USD", userId, destinationNetwork: "BASE", address } }), "address"),
};

async function fundedUser() {
  const userId = await createUser(server, tenant);
  await fund(server, tenant.clientId, userId, "USDC", "1000");
  await fund(server, tenant.clientId, userId, "NGN", "1000");
  return userId;
}

/** Runs a value through every route, each with a fresh user (a virtual account is one per user and currency). */
async function verdicts(routes: Record<string, (userId: string, value: string) => Promise<Verdict>>, value: string) {
  const results: Record<string, boolean> = {};
  for (const [name, send] of Object.entries(routes)) results[name] = (await send(await fundedUser(), value)).accepted;
  return results;
}

const everywhere = (routes: Record<string, unknown>, accepted: boolean) => Object.fromEntries(Object.keys(routes).map((name) => [name, accepted]));

describe("amounts: plain decimal notation, a number or a string; never an exponent", () => {
  it.each([
    ["15", true],
    ['"15"', true],
    ["15.5", true],
    ['"15.50"', true],
    ["1.5e1", false],
    ["1.5E1", false],
    ["15e0", false],
    ['"1e1"', false],
    ['"1.5e1"', false],
  ])("amount %s: the same verdict on every route (accepted: %s)", async (value, accepted) => {
    expect(await verdicts(amountRoutes, value)).toEqual(everywhere(amountRoutes, accepted));
  });

  it("an exponent's refusal names the field and says why", async () => {
    const verdict = await amountRoutes["REST POST /v1/withdrawals/usdc"](await fundedUser(), "1.5e1");
    expect(verdict.text).toBe("amount: must be a decimal number in plain notation, without an exponent");
  });

  it.each([
    ["1.5", true],
    ['"1.5"', true],
    ["1.5e0", false],
    ["15e-1", false],
    ['"1.5e0"', false],
  ])("developerFeePercent %s: the same verdict on every route (accepted: %s)", async (value, accepted) => {
    expect(await verdicts(percentRoutes, value)).toEqual(everywhere(percentRoutes, accepted));
  });
});

describe("addresses: all-lower, all-upper or EIP-55 mixed case", () => {
  it.each([
    ["EIP-55 mixed case", OUTSIDE, true],
    ["all lower-case", OUTSIDE.toLowerCase(), true],
    ["all upper-case hex", `0x${OUTSIDE.slice(2).toUpperCase()}`, true],
    ["surrounded by spaces", ` ${OUTSIDE} `, true],
    ["mixed case with a wrong checksum", OUTSIDE.replace("C7", "c7"), false],
    ["an upper-case 0X", `0X${OUTSIDE.slice(2).toLowerCase()}`, false],
    ["without 0x", OUTSIDE.slice(2), false],
    ["one digit short", OUTSIDE.slice(0, -1), false],
  ])("%s: the same verdict on every route", async (_name, address, accepted) => {
    expect(await verdicts(addressRoutes, address)).toEqual(everywhere(addressRoutes, accepted));
  });
});
