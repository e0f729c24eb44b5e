import { GraphQLError } from "graphql";
import { AppError } from "../errors.js";
import type { Logger } from "../logger.js";

/** Finds the AppError behind a GraphQL error, however deeply it was wrapped. */
export function appErrorOf(error: unknown): AppError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current; depth++) {
    if (current instanceof AppError) return current;
    current = (current as { originalError?: unknown }).originalError;
  }
  return undefined;
}

/**
 * The one place GraphQL errors are shaped: an AppError keeps its message and gets
 * `extensions.code`; request errors (parse, validation, variables: no resolver path) are BAD_USER_INPUT; anything
 * else is logged and masked as INTERNAL.
 */
export function maskError(error: unknown, logger: Logger): GraphQLError {
  const appError = appErrorOf(error);
  const graphQLError = error instanceof GraphQLError ? error : undefined;
  if (appError) {
    return new GraphQLError(appError.message, {
      nodes: graphQLError?.nodes,
      path: graphQLError?.path,
      extensions: {
        code: appError.code,
        ...(appError.details ? { details: appError.details } : {}),
      },
    });
  }
  if (graphQLError && !graphQLError.path) {
    return new GraphQLError(graphQLError.message, {
      nodes: graphQLError.nodes,
      path: graphQLError.path,
      extensions: { ...graphQLError.extensions, code: "BAD_USER_INPUT" },
    });
  }
  logger.error({ err: graphQLError?.originalError ?? error }, "unexpected error");
  return new GraphQLError("Unexpected error", {
    nodes: graphQLError?.nodes,
    path: graphQLError?.path,
    extensions: { code: "INTERNAL" },
  });
}
