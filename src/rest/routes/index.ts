import type { Route } from "../route.js";
import { apiKeyRoutes } from "./api-keys.js";
import { clientAuthRoutes } from "./client-auth.js";
import { userRoutes } from "./users.js";
import { virtualAccountRoutes } from "./virtual-accounts.js";

/** The /v1 REST surface: every documented path, mapped onto the GraphQL schema, one file per domain. */
export const routes: Route[] = [...clientAuthRoutes, ...apiKeyRoutes, ...userRoutes, ...virtualAccountRoutes];

/** Present only when SANDBOX is on. */
export const sandboxRoutes: Route[] = [];
