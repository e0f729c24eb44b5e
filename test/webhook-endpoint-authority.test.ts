import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gql, rest } from "./support/http.js";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";

/**
 * Changing a webhook endpoint (rotating its secret, deleting it) needs what registering that
 * endpoint needs: the read permission of every type it receives, every type for an endpoint
 * without a list. A key with `events:write` alone must not take over an all-events endpoint (and
 * receive its new whsec_), nor delete it. REST and GraphQL alike.
 */
let server: TestServer;
let tenant: Tenant;
beforeAll(async () => {
  server = await startServer();
  tenant = await newTenant(server);
});
afterAll(() => server?.stop());

type Grants = Record<string, "read" | "write">;
type Action = "rotate" | "delete";
type Outcome = { ok: true; secret?: string } | { ok: false; code: string; message: string };

async function keyWith(permissions: Grants): Promise<Record<string, string>> {
  const res = await rest(server, "POST", "/v1/api-keys", { headers: tenant.headers, body: { permissions } });
  if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
  return { "x-api-key": res.body.key };
}

/** A new endpoint of the tenant's (made by its full key): all types, or the given ones. */
async function endpoint(events?: string[]): Promise<string> {
  const res = await rest(server, "POST", "/v1/webhook-endpoints", { headers: tenant.headers, body: { url: "http://127.0.0.1:9/hooks", ...(events ? { events } : {}) } });
  if (res.status !== 201) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

const TRANSPORTS = {
  async rest(headers: Record<string, string>, action: Action, id: string): Promise<Outcome> {
    const res = action === "rotate" ? await rest(server, "POST", `/v1/webhook-endpoints/${id}/rotate-secret`, { headers, body: {} }) : await rest(server, "DELETE", `/v1/webhook-endpoints/${id}`, { headers });
    if (res.status === 200) return { ok: true, secret: res.body.secret };
    // REST's refusal is the 403 of its code.
    return { ok: false, code: res.status === 403 ? res.body.code : `${res.body.code} (HTTP ${res.status})`, message: res.body.error };
  },
  async graphql(headers: Record<string, string>, action: Action, id: string): Promise<Outcome> {
    const res =
      action === "rotate"
        ? await gql(server, `mutation ($id: ID!) { result: rotateWebhookEndpointSecret(id: $id) { id secret } }`, { id }, headers)
        : await gql(server, `mutation ($id: ID!) { result: deleteWebhookEndpoint(id: $id) { id deleted } }`, { id }, headers);
    const error = res.body.errors?.[0];
    if (error) return { ok: false, code: error.extensions?.code ?? "", message: error.message };
    return { ok: true, secret: (res.body.data as { result: { secret?: string } }).result.secret };
  },
};

type Case = { name: string; grants: Grants; events?: string[]; action: Action; refusedFor?: string };

const CASES: Case[] = [
  { name: "events:write alone rotates no all-events endpoint", grants: { events: "write" }, action: "rotate", refusedFor: "users:read" },
  { name: "events:write alone deletes no all-events endpoint", grants: { events: "write" }, action: "delete", refusedFor: "users:read" },
  { name: "reading some types is not enough for an all-events endpoint", grants: { events: "write", users: "read", deposits: "read" }, action: "rotate", refusedFor: "accounts:read" },
  { name: "reading some types is not enough to delete an all-events endpoint", grants: { events: "write", users: "read", deposits: "read" }, action: "delete", refusedFor: "accounts:read" },
  { name: "events:write alone rotates no endpoint of deposit events", grants: { events: "write" }, events: ["deposit.created"], action: "rotate", refusedFor: "deposits:read" },
  { name: "events:write alone deletes no endpoint of deposit events", grants: { events: "write" }, events: ["deposit.completed", "withdrawal.completed"], action: "delete", refusedFor: "deposits:read" },
  { name: "a key reading withdrawals deletes no endpoint that also takes deposits", grants: { events: "write", withdrawals: "read" }, events: ["deposit.completed", "withdrawal.completed"], action: "delete", refusedFor: "deposits:read" },
  { name: "a key reading every type the endpoint takes rotates it", grants: { events: "write", deposits: "read" }, events: ["deposit.created"], action: "rotate" },
  { name: "a key reading every type the endpoint takes deletes it", grants: { events: "write", deposits: "read", withdrawals: "read" }, events: ["deposit.completed", "withdrawal.completed"], action: "delete" },
  {
    name: "a key reading every resource rotates an all-events endpoint",
    grants: { events: "write", users: "read", accounts: "read", deposits: "read", withdrawals: "read", conversions: "read", cards: "read", api_keys: "read" },
    action: "rotate",
  },
];

describe.each(Object.entries(TRANSPORTS))("changing a webhook endpoint with a restricted key, over %s", (_transport, act) => {
  it.each(CASES)("$name", async ({ grants, events, action, refusedFor }) => {
    const id = await endpoint(events);
    const before = await server.app.db.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id } });
    const outcome = await act(await keyWith(grants), action, id);
    const after = await server.app.db.prisma.webhookEndpoint.findUnique({ where: { id } });
    if (refusedFor) {
      expect(outcome).toEqual({ ok: false, code: "FORBIDDEN", message: `This API key lacks the ${refusedFor} permission` });
      expect(after, "the refused change changed nothing").toEqual(before);
    } else {
      expect(outcome.ok, JSON.stringify(outcome)).toBe(true);
      if (action === "rotate") {
        expect(outcome.ok && outcome.secret).toMatch(/^whsec_/);
        expect(after?.secretEnc).not.toEqual(before.secretEnc);
      } else expect(after).toBeNull();
    }
  });
});
