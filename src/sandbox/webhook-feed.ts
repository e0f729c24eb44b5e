import type { ProviderEvent } from "../webhooks/events.js";
import type { WebhookOutcome, WebhookService } from "../webhooks/service.js";
import { signWebhook } from "../webhooks/signature.js";

/** How the sandbox plays a provider: it signs an event with that provider's secret and hands it to the same path as `POST /v1/webhooks/{provider}`. */
export type DeliverEvent = (provider: string, event: ProviderEvent) => Promise<WebhookOutcome>;

export function webhookFeed(webhooks: WebhookService, secretFor: (provider: string) => string): DeliverEvent {
  return (provider, event) => {
    const rawBody = Buffer.from(JSON.stringify(event));
    return webhooks.receive({ provider, signature: signWebhook(secretFor(provider), rawBody), rawBody });
  };
}
