import { appErrorOf } from "../graphql/errors.js";
import type { RateLimits } from "./rate-limits.js";

/**
 * Authenticates a caller at address `ip`, held to the address's budget of failed authentications
 * (AUTH_FAILURE_RATE_LIMIT_PER_MINUTE), the one every transport shares: HTTP (REST, GraphQL, SSE)
 * through admission, graphql-ws at `connection_init`. An address that has used the budget up is
 * refused RATE_LIMITED for the rest of the window, a valid credential included (a guesser learns
 * nothing from its later tries); each UNAUTHENTICATED draws one point. Other refusals (a key used
 * outside its IP allowlist) are not failures: the credential is valid.
 */
export async function authenticateWithinBudget<T>(rateLimits: RateLimits, ip: string, authenticate: () => Promise<T>): Promise<T> {
  // An address this process knows to be blocked is refused before its credential is looked up.
  rateLimits.refuseKnownBlocked(ip);
  // The budget's answer (a round trip to the supervisor, or to Redis, where the budget is shared) and
  // the credential's are awaited together: a valid credential no longer waits for one, then the other.
  const [budget, credential] = await Promise.allSettled([rateLimits.authenticationAllowed(ip), authenticate()]);
  if (budget.status === "rejected") throw budget.reason;
  if (credential.status === "fulfilled") return credential.value;
  if (appErrorOf(credential.reason)?.code === "UNAUTHENTICATED") await rateLimits.authenticationFailed(ip);
  throw credential.reason;
}
