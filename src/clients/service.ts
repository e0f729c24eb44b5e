import { randomUUID } from "node:crypto";
import type { Client, PrismaClient } from "../generated/prisma/client.js";
import { rememberMode, type Mode } from "../modes.js";

type Db = Pick<PrismaClient, "client">;

/**
 * Finds or creates a business: its test tenant (whose id is the business's `accountId`) and its live
 * tenant. Both exist from the start, so a credential of either mode always has a tenant to act in.
 */
export async function findOrCreateBusiness(prisma: Db, input: { email: string; name?: string | null }): Promise<Record<Mode, Client>> {
  const id = randomUUID();
  const test = await prisma.client.upsert({
    where: { email_mode: { email: input.email, mode: "test" } },
    create: { id, accountId: id, email: input.email, name: input.name ?? null, mode: "test" },
    update: {},
  });
  const live = await tenantOf(prisma, test, "live");
  return { test, live };
}

/** The tenant of `account`'s business in `mode` (created with the business; created here for a business that predates modes). */
export async function tenantOf(prisma: Db, account: Pick<Client, "accountId" | "email" | "name">, mode: Mode): Promise<Client> {
  const tenant = await prisma.client.upsert({
    where: { accountId_mode: { accountId: account.accountId, mode } },
    create: { accountId: account.accountId, email: account.email, name: account.name, mode },
    update: {},
  });
  rememberMode(tenant.id, mode);
  return tenant;
}
