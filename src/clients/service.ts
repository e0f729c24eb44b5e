import { z } from "zod";
import type { PrismaClient } from "../generated/prisma/client.js";
import { UNBOUNDED } from "../keys/authority.js";
import type { ApiKeyService } from "../keys/service.js";
import { email, parseInput } from "../validation.js";

const NewClient = z.object({
  email,
  name: z.string().trim().min(1).max(100).optional(),
});

/** Operator path to a first credential: find or create the client, then issue one API key. */
export async function createClientWithKey(prisma: PrismaClient, keys: ApiKeyService, input: unknown) {
  const { email, name } = parseInput(NewClient, input);
  const client = await prisma.client.upsert({ where: { email }, create: { email, name }, update: {} });
  const apiKey = await keys.create(client.id, undefined, UNBOUNDED);
  return { client, apiKey };
}
