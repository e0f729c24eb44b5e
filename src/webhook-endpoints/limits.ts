/** Webhook endpoints one client may register. */
export const MAX_ENDPOINTS_PER_CLIENT = 20;

/**
 * Deliveries one endpoint may have waiting to be sent. A resend beyond it is refused (429); an event
 * that finds its endpoint full is recorded as a delivery FAILED at once, with an attempt saying why,
 * and can be resent once the queue has drained.
 */
export const MAX_PENDING_PER_ENDPOINT = 100;
