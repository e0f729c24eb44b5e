import { graphql, type ResultOf } from "../graphql/typed.js";

/** The contract's user record, in its order (also the `data.object` of user events). */
export const UserFields = graphql(`fragment UserFields on User { id createdAt updatedAt firstName lastName phoneNumber email clientId externalId metadata livemode }`);
export const USER_KEYS = ["id", "createdAt", "updatedAt", "firstName", "lastName", "phoneNumber", "email", "clientId", "externalId", "metadata", "livemode"] as const satisfies readonly (keyof ResultOf<typeof UserFields>)[];
