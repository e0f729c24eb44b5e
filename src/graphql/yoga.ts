import { NoSchemaIntrospectionCustomRule as NoSchemaIntrospection, type GraphQLError, type ValidationContext } from "graphql";
import { createYoga, type YogaServerInstance } from "graphql-yoga";
import { EnvelopArmorPlugin } from "@escape.tech/graphql-armor";
import type { PrismaClient } from "../generated/prisma/client.js";
import type { IncomingMessage } from "node:http";
import { credentialsFromConnectionParams } from "../auth/credentials.js";
import { authenticateRequest } from "../http/request-auth.js";
import type { Logger } from "../logger.js";
import type { Services } from "../services.js";
import { createContext, type Context } from "./context.js";
import { maskError } from "./errors.js";
import { sseEventIds } from "../events/sse.js";
import { schema } from "./schema.js";

export type Yoga = YogaServerInstance<Record<string, unknown>, Context>;

export function createGraphQLServer(options: {
  prisma: PrismaClient;
  services: Services;
  logger: Logger;
  graphiql: boolean;
  introspection: boolean;
}): Yoga {
  return createYoga<Record<string, unknown>, Context>({
    schema,
    graphqlEndpoint: "/graphql",
    graphiql: options.graphiql ? { subscriptionsProtocol: "WS" } : false,
    landingPage: false,
    logging: false,
    // Over websockets the credentials come from `connection_init`; over HTTP (and SSE) from the request's headers.
    context: (initial) => {
      const req = initial.req as IncomingMessage | undefined;
      const connectionParams = initial.connectionParams as Record<string, unknown> | undefined;
      return createContext(options.services, options.prisma, () =>
        connectionParams || !req
          ? options.services.auth.authenticate(credentialsFromConnectionParams(connectionParams))
          : authenticateRequest(req, options.services),
      );
    },
    maskedErrors: { maskError: (error) => maskError(error, options.logger) },
    plugins: [
      EnvelopArmorPlugin({
        maxDepth: { n: 8, ...asValidationError },
        costLimit: { maxCost: 5000, ...asValidationError },
        maxAliases: { n: 20, ...asValidationError },
        maxDirectives: { n: 20, ...asValidationError },
        maxTokens: { n: 2000 },
        blockFieldSuggestion: { enabled: !options.introspection },
      }),
      ...(options.introspection ? [] : [disableIntrospection()]),
      sseEventIds(),
    ],
  });
}

/**
 * Armor throws its refusals out of validation by default, which yoga then answers as a 200 with an
 * error; reported as validation errors they are the spec's 400 (and graphql-ws gets them as errors).
 */
const asValidationError = {
  propagateOnRejection: false,
  onReject: [(ctx: ValidationContext | null, error: GraphQLError) => ctx?.reportError(error)],
};

function disableIntrospection() {
  return {
    onValidate({ addValidationRule }: { addValidationRule: (rule: unknown) => void }) {
      addValidationRule(NoSchemaIntrospection);
    },
  };
}
