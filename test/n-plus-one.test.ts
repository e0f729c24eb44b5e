import { AsyncLocalStorage } from "node:async_hooks";
import type { IncomingMessage, ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newTenant, startServer, type Tenant, type TestServer } from "./support/server.js";
import { createUser, gql, rest } from "./support/http.js";

let server: TestServer;
beforeAll(async () => {
  // Every request then verifies its key in the same statements, however far apart the two runs are.
  server = await startServer({ env: { CREDENTIAL_CACHE_MS: "0" } });
  markRequests();
});
afterAll(() => server?.stop());

type Queryable = { query: (...args: never[]) => unknown };

/**
 * The driver every SQL statement goes through: the pg Pool on PostgreSQL; on the embedded database
 * (no pool) the PGlite instance held by Prisma's driver adapter.
 */
function sqlDriver(): Queryable {
  if (server.app.db.pool) return server.app.db.pool as unknown as Queryable;
  const engineConfig = (server.app.db.prisma as unknown as { _engineConfig: { adapter: { client: Queryable } } })._engineConfig;
  return engineConfig.adapter.client;
}

type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;
const servingRequest = new AsyncLocalStorage<true>();

/** Runs the server's request handling inside `servingRequest`, so statements can be told apart from background work. */
function markRequests() {
  const http = server.app.httpServer;
  const listeners = http.listeners("request") as RequestListener[];
  http.removeAllListeners("request");
  http.on("request", (req: IncomingMessage, res: ServerResponse) =>
    servingRequest.run(true, () => listeners.forEach((listener) => listener.call(http, req, res))),
  );
}

/** How many SQL statements the server sends while serving `run`'s requests (background pollers do not count). */
async function countSql(run: () => Promise<unknown>): Promise<number> {
  const driver = sqlDriver();
  const original = driver.query;
  let count = 0;
  driver.query = function (this: unknown, ...args: never[]) {
    if (servingRequest.getStore()) count++;
    return original.apply(this, args);
  };
  try {
    await run();
  } finally {
    driver.query = original;
  }
  return count;
}

/** A tenant with `n` users, each with a wallet, a USDC account and a card with one transaction. */
async function tenantWithUsers(n: number): Promise<Tenant> {
  const tenant = await newTenant(server);
  for (let i = 0; i < n; i++) {
    const userId = await createUser(server, tenant);
    await rest(server, "POST", `/v1/accounts/usdc/${userId}`, { headers: tenant.headers, body: { chainType: "BASE" } });
    const card = (await rest(server, "GET", `/v1/virtual-cards/${userId}`, { headers: tenant.headers })).body;
    await server.app.db.prisma.cardTransaction.create({
      data: { cardId: card.id, userId, clientId: tenant.clientId, amount: "1", balance: "9", description: `for ${userId}`, status: "SETTLED", type: "DEBIT" },
    });
  }
  return tenant;
}

const USERS_WITH_NESTED = `{
  users(limit: 100) {
    id livemode
    wallet { id address blockchain livemode }
    card { id cardNumber cardCVV cardExpiry livemode }
    usdcAccounts { chain address balance livemode }
    cardTransactions { totalCount edges { node { description livemode } } }
  }
}`;

describe("nested wallet, card, card transactions and USDC accounts of a user list, each with its livemode", () => {
  it("cost the same number of SQL statements for 2 users as for 20 (no N+1)", async () => {
    const [few, many] = [await tenantWithUsers(2), await tenantWithUsers(20)];
    // Warm up (authentication caches, prepared plans) so both runs are measured alike.
    await gql(server, USERS_WITH_NESTED, {}, few.headers);
    await gql(server, USERS_WITH_NESTED, {}, many.headers);

    let fewResult: Awaited<ReturnType<typeof gql>> | undefined;
    let manyResult: Awaited<ReturnType<typeof gql>> | undefined;
    const fewStatements = await countSql(async () => (fewResult = await gql(server, USERS_WITH_NESTED, {}, few.headers)));
    const manyStatements = await countSql(async () => (manyResult = await gql(server, USERS_WITH_NESTED, {}, many.headers)));

    expect(fewResult?.body.errors).toBeUndefined();
    type User = { id: string; wallet: unknown; card: unknown; usdcAccounts: unknown[]; cardTransactions: { edges: { node: { description: string } }[] } };
    const users = (manyResult?.body.data as { users: User[] }).users;
    expect(users).toHaveLength(20);
    expect(users.every((u) => u.wallet && u.card && u.usdcAccounts.length === 1)).toBe(true);
    expect(JSON.stringify(users).match(/"livemode":false/g)).toHaveLength(20 * 5);
    // Batched pages still belong to their own card.
    expect(users.every((u) => u.cardTransactions.edges.map((edge) => edge.node.description).join() === `for ${u.id}`)).toBe(true);
    expect(fewStatements).toBeGreaterThan(0);
    expect(manyStatements).toBe(fewStatements);
  });
});
