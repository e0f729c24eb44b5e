import { graphql, type ResultOf } from "../graphql/typed.js";

/** An API key as lists show it (also the `data.object` of API key events). */
export const ApiKeyFields = graphql(`fragment ApiKeyFields on ApiKey { id prefix createdAt lastUsedAt revokedAt }`);
export const API_KEY_KEYS = ["id", "prefix", "createdAt", "lastUsedAt", "revokedAt"] as const satisfies readonly (keyof ResultOf<typeof ApiKeyFields>)[];
