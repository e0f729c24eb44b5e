import type { IncomingMessage } from "node:http";
import { credentialsFrom } from "../auth/credentials.js";
import type { AuthenticatedClient } from "../auth/service.js";
import type { Services } from "../services.js";

const byRequest = new WeakMap<IncomingMessage, Promise<AuthenticatedClient>>();

/** The caller behind an HTTP request, authenticated once however many layers ask (idempotency, then the operation). */
export function authenticateRequest(req: IncomingMessage, services: Services): Promise<AuthenticatedClient> {
  let authenticated = byRequest.get(req);
  if (!authenticated) {
    authenticated = services.auth.authenticate(credentialsFrom(req.headers));
    byRequest.set(req, authenticated);
  }
  return authenticated;
}
