// The schema is the sum of the domains: each folder registers its own types and fields.
import { builder } from "../graphql/builder.js";
import { assertPermissionsDeclared } from "../graphql/type-resources.js";
import "../graphql/scalars.js";
import "../auth/schema.js";
import "../keys/schema.js";
import "../users/schema.js";
import "../wallets/schema.js";
import "../cards/schema.js";
import "../accounts/usdc-schema.js";
import "../accounts/virtual-account-schema.js";
import "../ledger/schema.js";
import "../conversion/schema.js";
import "../cards/spending-schema.js";
import "../cards/authorization-schema.js";
import "../accounts/balance-lookup-schema.js";
import "../deposits/schema.js";
import "../deposits/subscription.js";
import "../withdrawals/schema.js";
import "../developer-fees/schema.js";
import "../events/schema.js";
import "../webhook-endpoints/schema.js";
import "../audit/schema.js";
import "../rail/schema.js";

export const schema = builder.toSchema({ sortSchema: false });
assertPermissionsDeclared(schema);
