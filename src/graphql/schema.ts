// The schema is the sum of the domains: each folder registers its own types and fields.
import { builder } from "./builder.js";
import "./scalars.js";
import "../auth/schema.js";
import "../keys/schema.js";
import "../users/schema.js";
import "../accounts/virtual-account-schema.js";

export const schema = builder.toSchema({ sortSchema: false });
