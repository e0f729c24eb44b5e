import type { Config } from "./config.js";
import type { PrismaClient } from "./generated/prisma/client.js";
import type { ApiKeyService } from "./keys/service.js";
import { createClientWithKey } from "./keys/first-key.js";

export const SANDBOX_CLIENT = { email: "sandbox@example.com", name: "Sandbox" };

/**
 * The first start of a new embedded database (a developer's machine: production always has a
 * DATABASE_URL) creates a sandbox client and returns its API key, so the first request needs no
 * set-up. Any later start, or a database that already has a client, gets nothing.
 */
export async function firstRunApiKey(config: Config, prisma: PrismaClient, keys: ApiKeyService): Promise<string | undefined> {
  if (config.databaseUrl || config.env === "production") return undefined;
  if ((await prisma.client.count()) > 0) return undefined;
  const { apiKey } = await createClientWithKey(prisma, keys, SANDBOX_CLIENT);
  return apiKey.key;
}

/**
 * Written once to the terminal, not to the log: log lines redact credentials, and this key is the
 * point of the message. It is not stored anywhere else (the database keeps its hash).
 */
export function firstRunBanner(url: string, apiKey: string): string {
  return [
    "",
    "  First run: a sandbox client was created on this new embedded database.",
    `  Test-mode API key (shown once): ${apiKey}`,
    "  Test mode plays money (sandbox helpers, simulated or test chains); live mode moves real money only (docs/modes.md).",
    "",
    "  Try it:",
    `    curl -s ${url}/v1/api-keys -H 'x-api-key: ${apiKey}'`,
    "",
    `  API reference: ${url}/docs    GraphiQL: ${url}/graphql`,
    "",
    "",
  ].join("\n");
}
