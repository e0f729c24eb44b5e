import { graphql, type ResultOf } from "../graphql/typed.js";
import type { User } from "../generated/prisma/client.js";
import { asGraphQLValues, pickKeys } from "../representation.js";

/** The contract's user record, in its order (also the `data.object` of user events). */
export const UserFields = graphql(`fragment UserFields on User { id createdAt updatedAt firstName lastName phoneNumber email clientId externalId metadata livemode }`);
export const USER_KEYS = ["id", "createdAt", "updatedAt", "firstName", "lastName", "phoneNumber", "email", "clientId", "externalId", "metadata", "livemode"] as const satisfies readonly (keyof ResultOf<typeof UserFields>)[];

/** A user as REST shows it: the `data.object` of its events. */
export const userObject = (user: User) => pickKeys(asGraphQLValues(user), USER_KEYS);
