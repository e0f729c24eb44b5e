import { expect } from "vitest";
import { createUser, rest } from "./http.js";
import { newVirtualAccount, simulateDeposit } from "./deposits.js";
import type { Tenant, TestServer } from "./server.js";

/** Steps that make a deposit change state, through the sandbox's REST helpers. */

/** A user with a USD virtual account, so that a sandbox USD deposit can arrive. */
export async function userWithUsdAccount(server: TestServer, tenant: Tenant): Promise<string> {
  const userId = await createUser(server, tenant);
  await newVirtualAccount(server, tenant, userId, "usd");
  return userId;
}

/** A PENDING sandbox deposit of `amount` USD for the user; returns its id. */
export async function simulateUsdDeposit(server: TestServer, tenant: Tenant, userId: string, amount = 25): Promise<string> {
  return (await simulateDeposit(server, tenant, { userId, currency: "USD", amount })).id;
}

export async function completeDeposit(server: TestServer, tenant: Tenant, depositId: string): Promise<void> {
  const res = await rest(server, "POST", `/v1/sandbox/deposits/${depositId}/complete`, { headers: tenant.headers });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}
