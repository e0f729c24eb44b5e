/** Webhook endpoints one client may register. */
export const MAX_ENDPOINTS_PER_CLIENT = 20;

/**
 * Pending deliveries beyond which a manual resend to an endpoint is refused (429, retry once the
 * queue has drained). Events are always queued, however many wait (see recordEvent).
 */
export const MAX_PENDING_PER_ENDPOINT = 100;
