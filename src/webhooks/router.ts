import express, { Router } from "express";
import type { WebhookService } from "./service.js";

/**
 * `POST /v1/webhooks/:provider`: a plain Express route (providers are not GraphQL clients), mounted
 * before the JSON parser because the signature covers the raw bytes of the body.
 */
export function webhookRouter(webhooks: WebhookService): Router {
  const router = Router();
  router.post("/v1/webhooks/:provider", express.raw({ type: () => true, limit: "100kb" }), async (req, res) => {
    const { duplicate } = await webhooks.receive({
      provider: req.params.provider,
      signature: req.get("x-webhook-signature"),
      rawBody: Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0),
    });
    res.json(duplicate ? { received: true, duplicate: true } : { received: true });
  });
  return router;
}
