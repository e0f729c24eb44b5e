import type { Server } from "node:http";
import { WebSocketServer } from "ws";
import { useServer } from "graphql-ws/use/ws";
import type { ExecutionArgs } from "graphql";
import { credentialsFromConnectionParams } from "../auth/credentials.js";
import type { Services } from "../services.js";
import type { Yoga } from "./yoga.js";

type EnvelopedRoot = {
  execute: (args: ExecutionArgs) => unknown;
  subscribe: (args: ExecutionArgs) => unknown;
};

/**
 * graphql-ws (protocol graphql-transport-ws) on the HTTP server's /graphql path, through yoga's
 * envelop so the same plugins, context and error masking apply. Credentials go in the
 * `connection_init` payload; a connection without valid ones is closed (4403).
 */
export function attachWebSocketServer(httpServer: Server, yoga: Yoga, services: Services) {
  const wsServer = new WebSocketServer({ server: httpServer, path: yoga.graphqlEndpoint });
  const disposable = useServer(
    {
      execute: (args) => (args.rootValue as EnvelopedRoot).execute(args) as never,
      subscribe: (args) => (args.rootValue as EnvelopedRoot).subscribe(args) as never,
      onConnect: async (ctx) => {
        try {
          await services.auth.authenticate(credentialsFromConnectionParams(ctx.connectionParams));
          return true;
        } catch {
          return false;
        }
      },
      onSubscribe: async (ctx, _id, params) => {
        const { schema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
          ...ctx,
          req: ctx.extra.request,
          socket: ctx.extra.socket,
          params,
          connectionParams: ctx.connectionParams,
        });
        const args = {
          schema,
          operationName: params.operationName,
          document: parse(params.query),
          variableValues: params.variables,
          contextValue: await contextFactory(),
          rootValue: { execute, subscribe },
        };
        const errors = validate(args.schema, args.document);
        return errors.length ? errors : args;
      },
    },
    wsServer,
  );
  return {
    async close() {
      await disposable.dispose();
      await new Promise<void>((resolve) => wsServer.close(() => resolve()));
    },
  };
}
