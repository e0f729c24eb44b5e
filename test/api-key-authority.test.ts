import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gql, rest } from "./support/http.js";
import { signIn, startServerWithMailbox, type Mailbox } from "./support/mailbox.js";
import { newTenant, type Tenant, type TestServer } from "./support/server.js";

/**
 * A restricted key creates, rolls and revokes only keys within its own grants, allowlist and expiry,
 * and a new key inherits at most those (docs/api-keys.md), on REST and GraphQL alike. Sessions and
 * unrestricted keys keep full power. The test server sees every request from 127.0.0.1.
 */
let server: TestServer;
let mailbox: Mailbox;
let tenant: Tenant;
beforeAll(async () => {
  ({ server, mailbox } = await startServerWithMailbox());
  tenant = await newTenant(server);
});
afterAll(() => server?.stop());

type Grants = Record<string, "read" | "write">;
type KeySpec = { permissions?: Grants; allowedIps?: string[]; expiresInHours?: number };
type Made = { id: string; key: string; expiresAt: string | null; allowedIps: string[] | null };

/** The restricted actor: every kind of restriction at once. */
const BOUNDED: KeySpec = { permissions: { api_keys: "write", ledger: "read" }, allowedIps: ["127.0.0.0/8"], expiresInHours: 1 };
/** The plain actor of the review: only `api_keys: write`, no allowlist, no expiry. */
const PLAIN: KeySpec = { permissions: { api_keys: "write" } };
const WITHIN: KeySpec = { permissions: { ledger: "read" }, allowedIps: ["127.0.0.1"], expiresInHours: 0.5 };

/** A key made by the tenant's full key. */
async function makeKey(spec: KeySpec): Promise<Made> {
  const res = await rest(server, "POST", "/v1/api-keys", { headers: tenant.headers, body: spec });
  if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

type Outcome = { ok: true; id: string; expiresAt: string | null; allowedIps: string[] | null } | { ok: false; code: string; message: string };
type Action = "create" | "roll" | "revoke";
const asList = (grants: Grants | undefined) => grants && Object.entries(grants).map(([resource, access]) => ({ resource: resource.toUpperCase(), access: access.toUpperCase() }));

const TRANSPORTS = {
  async rest(headers: Record<string, string>, action: Action, target: string | KeySpec): Promise<Outcome> {
    const res =
      action === "create" ? await rest(server, "POST", "/v1/api-keys", { headers, body: target })
      : action === "roll" ? await rest(server, "POST", `/v1/api-keys/${target}/roll`, { headers, body: {} })
      : await rest(server, "DELETE", `/v1/api-keys/${target}`, { headers });
    if (res.status === 200) return { ok: true, id: res.body.id, expiresAt: res.body.expiresAt, allowedIps: res.body.allowedIps };
    return { ok: false, code: res.body.code, message: res.body.error };
  },
  async graphql(headers: Record<string, string>, action: Action, target: string | KeySpec): Promise<Outcome> {
    const fields = "{ id expiresAt allowedIps }";
    const res =
      action === "create"
        ? await gql(server, `mutation ($input: CreateApiKeyInput) { result: createApiKey(input: $input) ${fields} }`, { input: { ...(target as KeySpec), permissions: asList((target as KeySpec).permissions) } }, headers)
        : await gql(server, `mutation ($id: ID!) { result: ${action}ApiKey(id: $id) ${fields} }`, { id: target }, headers);
    const error = res.body.errors?.[0];
    if (error) return { ok: false, code: error.extensions?.code ?? "", message: error.message };
    return { ok: true, ...(res.body.data as { result: { id: string; expiresAt: string | null; allowedIps: string[] | null } }).result };
  },
};

type Case = {
  name: string;
  actor: KeySpec | "session";
  action: Action;
  /** create: the body; roll and revoke: the key acted on ("self": the actor). */
  target: KeySpec | "self";
  /** The refusal's reason, or what the answer holds when it is served. */
  expected: RegExp | ((outcome: Extract<Outcome, { ok: true }>, actor: Made | undefined) => void);
};

const expiresWithActor = (outcome: { expiresAt: string | null }, actor: Made | undefined) => expect(outcome.expiresAt).toBe(actor?.expiresAt);

const CASES: Case[] = [
  // Creating
  {
    name: "a new key without allowlist or expiry inherits the creator's",
    actor: BOUNDED, action: "create", target: { permissions: { ledger: "read" } },
    expected: (outcome, actor) => {
      expect(outcome.allowedIps).toEqual(["127.0.0.0/8"]);
      expiresWithActor(outcome, actor);
    },
  },
  {
    name: "a narrower allowlist and a shorter expiry are kept",
    actor: BOUNDED, action: "create", target: WITHIN,
    expected: (outcome, actor) => {
      expect(outcome.allowedIps).toEqual(["127.0.0.1"]);
      expect(Date.parse(outcome.expiresAt!)).toBeLessThan(Date.parse(actor!.expiresAt!));
    },
  },
  { name: "an address outside the creator's ranges", actor: BOUNDED, action: "create", target: { permissions: { ledger: "read" }, allowedIps: ["127.0.0.1", "10.0.0.0/8"] }, expected: /create a key with addresses outside its own allowedIps/ },
  { name: "a range wider than the creator's", actor: BOUNDED, action: "create", target: { permissions: { ledger: "read" }, allowedIps: ["126.0.0.0/7"] }, expected: /addresses outside its own allowedIps/ },
  { name: "a longer lifetime than the creator's", actor: BOUNDED, action: "create", target: { permissions: { ledger: "read" }, expiresInHours: 2 }, expected: /create a key with a lifetime beyond its own expiry/ },
  { name: "permissions the creator lacks", actor: BOUNDED, action: "create", target: { permissions: { users: "read" } }, expected: /create a key with permissions it does not have/ },
  {
    name: "a session keeps full power: a full key, anywhere, never expiring",
    actor: "session", action: "create", target: {},
    expected: (outcome) => expect(outcome).toMatchObject({ allowedIps: null, expiresAt: null }),
  },
  // Rolling
  {
    name: "rolling itself: the successor ends when the roller does and keeps its allowlist",
    actor: BOUNDED, action: "roll", target: "self",
    expected: (outcome, actor) => {
      expect(outcome.allowedIps).toEqual(["127.0.0.0/8"]);
      expiresWithActor(outcome, actor);
    },
  },
  { name: "rolling a key within its own", actor: BOUNDED, action: "roll", target: WITHIN, expected: (outcome, actor) => expiresWithActor(outcome, actor) },
  { name: "rolling the full key", actor: BOUNDED, action: "roll", target: {}, expected: /roll a key with permissions it does not have/ },
  { name: "rolling a key usable from anywhere", actor: BOUNDED, action: "roll", target: { ...WITHIN, allowedIps: undefined }, expected: /roll a key with addresses outside its own allowedIps/ },
  { name: "rolling a key that never expires", actor: BOUNDED, action: "roll", target: { ...WITHIN, expiresInHours: undefined }, expected: /roll a key with a lifetime beyond its own expiry/ },
  // Revoking
  { name: "a plain api_keys:write key revoking the full key", actor: PLAIN, action: "revoke", target: {}, expected: /revoke a key with permissions it does not have/ },
  { name: "revoking a key usable from anywhere", actor: BOUNDED, action: "revoke", target: { ...WITHIN, allowedIps: undefined }, expected: /revoke a key with addresses outside its own allowedIps/ },
  { name: "revoking a key that never expires", actor: BOUNDED, action: "revoke", target: { ...WITHIN, expiresInHours: undefined }, expected: /revoke a key with a lifetime beyond its own expiry/ },
  { name: "revoking a key within its own", actor: BOUNDED, action: "revoke", target: WITHIN, expected: () => {} },
  { name: "revoking itself", actor: PLAIN, action: "revoke", target: "self", expected: () => {} },
  { name: "a session revoking the full key", actor: "session", action: "revoke", target: {}, expected: () => {} },
];

const table = Object.keys(TRANSPORTS).flatMap((transport) => CASES.map((test) => ({ ...test, transport: transport as keyof typeof TRANSPORTS })));

describe("a restricted key acts only on keys within its own grants, allowlist and expiry", () => {
  it.each(table)("$transport $action: $name", async ({ transport, actor, action, target, expected }) => {
    // A session acts in a client of its own; keys are always acted on within the actor's client.
    const session = actor === "session" ? await signIn(server, mailbox) : undefined;
    const actorKey = actor === "session" ? undefined : await makeKey(actor);
    const headers = session?.headers ?? { "x-api-key": actorKey!.key };
    const made = async (spec: KeySpec) => {
      if (!session) return makeKey(spec);
      return (await rest(server, "POST", "/v1/api-keys", { headers: session.headers, body: spec })).body as Made;
    };
    const targetKey = action === "create" ? undefined : target === "self" ? actorKey! : await made(target as KeySpec);
    const before = targetKey && (await server.app.db.prisma.apiKey.findUniqueOrThrow({ where: { id: targetKey.id } }));

    const outcome = await TRANSPORTS[transport](headers, action, action === "create" ? (target as KeySpec) : targetKey!.id);

    if (expected instanceof RegExp) {
      expect(outcome).toEqual({ ok: false, code: "FORBIDDEN", message: expect.stringMatching(expected) });
      // Nothing changed: no key was made, and the key acted on is as it was.
      if (before) expect(await server.app.db.prisma.apiKey.findUniqueOrThrow({ where: { id: before.id } })).toEqual(before);
      return;
    }
    expect(outcome, JSON.stringify(outcome)).toMatchObject({ ok: true });
    expected(outcome as Extract<Outcome, { ok: true }>, actorKey);
    if (action === "revoke") expect((await server.app.db.prisma.apiKey.findUniqueOrThrow({ where: { id: targetKey!.id } })).revokedAt).not.toBeNull();
    if (action === "create" && outcome.ok && outcome.expiresAt && actorKey?.expiresAt) {
      expect(Date.parse(outcome.expiresAt)).toBeLessThanOrEqual(Date.parse(actorKey.expiresAt));
    }
  });
});
