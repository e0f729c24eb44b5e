import type { Route } from "../route.js";
import { apiKeyRoutes } from "./api-keys.js";
import { clientAuthRoutes } from "./client-auth.js";
import { userRoutes } from "./users.js";
import { virtualAccountRoutes } from "./virtual-accounts.js";
import { walletRoutes } from "./wallets.js";
import { cardRoutes } from "./cards.js";
import { usdcAccountRoutes } from "./usdc-accounts.js";
import { ledgerRoutes } from "./ledger.js";
import { conversionRoutes } from "./conversion.js";
import { accountLookupRoutes, balanceRoutes } from "./accounts-lookup.js";
import { sandboxCardRoutes } from "./sandbox-cards.js";
import { depositRoutes } from "./deposits.js";
import { sandboxDepositRoutes } from "./sandbox-deposits.js";
import { sandboxWithdrawalRoutes, withdrawalRoutes } from "./withdrawals.js";
import { eventRoutes } from "./events.js";
import { webhookEndpointRoutes } from "./webhook-endpoints.js";
import { clientBalanceRoutes } from "./client-balances.js";
import { auditLogRoutes } from "./audit-log.js";
import { networkRoutes } from "./networks.js";

/** The /v1 REST surface: every documented path, mapped onto the GraphQL schema, one file per domain. */
export const routes: Route[] = [...clientAuthRoutes, ...apiKeyRoutes, ...userRoutes, ...walletRoutes, ...cardRoutes, ...usdcAccountRoutes, ...virtualAccountRoutes, ...ledgerRoutes, ...depositRoutes, ...conversionRoutes, ...withdrawalRoutes, ...eventRoutes, ...webhookEndpointRoutes,
  ...clientBalanceRoutes, ...balanceRoutes, ...auditLogRoutes, ...networkRoutes,
  // Last: its `/v1/accounts/:currency/:userId` would otherwise shadow `/v1/accounts/usdc/:userId`.
  ...accountLookupRoutes];

/** Present only when SANDBOX is on. */
export const sandboxRoutes: Route[] = [...sandboxCardRoutes, ...sandboxDepositRoutes, ...sandboxWithdrawalRoutes];
