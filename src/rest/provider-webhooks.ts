import express, { type Express } from "express";
import { z } from "zod";
import type { DocumentedEndpoint } from "./route.js";
import { PROVIDER_EVENT } from "../webhooks/events.js";
import type { RateLimits } from "../pipeline/rate-limits.js";
import type { WebhookService } from "../webhooks/service.js";

const WEBHOOK_PATH = "/v1/webhooks/:provider";

/** Its entry in the OpenAPI document, beside the REST routes. */
export const webhookEndpoint: DocumentedEndpoint = {
  method: "POST",
  path: WEBHOOK_PATH,
  operationId: "receiveProviderEvent",
  docs: {
    summary: "Provider events: a deposit received, completed or failed",
    description: "For banking providers and the on-chain watcher, not for clients. Each event id takes effect once; a repeat answers `duplicate: true`.",
    auth: "signature",
    params: { provider: "the provider's name, such as sandbox-ngn, sandbox-fiat or sandbox-chain" },
    body: PROVIDER_EVENT,
    response: z.object({ received: z.literal(true), duplicate: z.literal(true).optional() }),
    errors: ["NOT_FOUND", "PAYLOAD_TOO_LARGE"],
    example: {
      body: {
        id: "evt_provider_000123",
        type: "deposit.received",
        data: { reference: "sbx_ngn_7c1e9a3f5b2d4e6a", accountNumber: "0123456789", amount: "50000.00", currency: "NGN", paymentReference: "SBX-PAY-000123" },
      },
      response: { received: true },
    },
  },
};

/**
 * `POST /v1/webhooks/:provider`: a plain Express route (providers are not GraphQL clients), mounted
 * before the JSON parser because the signature covers the raw bytes of the body.
 */
export function mountWebhooks(app: Express, webhooks: WebhookService, rateLimits: RateLimits) {
  app.post(WEBHOOK_PATH, express.raw({ type: () => true, limit: "100kb" }), async (req, res) => {
    await rateLimits.webhook(req.ip ?? "unknown");
    const { duplicate } = await webhooks.receive({
      provider: req.params.provider,
      signature: req.get("x-webhook-signature"),
      rawBody: Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0),
    });
    res.json(duplicate ? { received: true, duplicate: true } : { received: true });
  });
}
