import { createHmac } from "node:crypto";
import type { Config } from "../config.js";

/** `WEBHOOK_SECRET_<PROVIDER>`: the provider name in upper case, every other character an underscore. */
export const providerSecretVariable = (provider: string) => `WEBHOOK_SECRET_${provider.toUpperCase().replace(/[^A-Z0-9]/g, "_")}`;

/**
 * Each provider signs with its own secret, so a secret leaked by one provider cannot forge another's
 * events: `WEBHOOK_SECRET_<PROVIDER>` when set, else HMAC-SHA256 keyed with WEBHOOK_SECRET over
 * `webhook-provider:<name>`, as 64 hex characters.
 */
export function webhookSecretFor(config: Pick<Config, "webhookSecret" | "webhookProviderSecrets">, provider: string): string {
  return (
    config.webhookProviderSecrets[providerSecretVariable(provider)] ??
    createHmac("sha256", config.webhookSecret).update(`webhook-provider:${provider}`).digest("hex")
  );
}
