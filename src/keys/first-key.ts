import { z } from "zod";
import { findOrCreateBusiness } from "../clients/service.js";
import type { PrismaClient } from "../generated/prisma/client.js";
import { MODES } from "../modes.js";
import { email, parseInput } from "../validation.js";
import { UNBOUNDED } from "./authority.js";
import type { ApiKeyService } from "./service.js";

const NewClient = z.object({
  email,
  name: z.string().trim().min(1).max(100).optional(),
  mode: z.enum(MODES).optional(),
});

/** Operator path to a first credential: find or create the business, then issue one API key in `mode` (default test). */
export async function createClientWithKey(prisma: PrismaClient, keys: ApiKeyService, input: unknown) {
  const { email, name, mode = "test" } = parseInput(NewClient, input);
  const tenants = await findOrCreateBusiness(prisma, { email, name });
  const client = tenants[mode];
  const apiKey = await keys.create(client.id, undefined, UNBOUNDED);
  return { client, apiKey };
}
