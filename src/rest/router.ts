import { Router, type Request, type Response } from "express";
import { execute, parse, validate, type DocumentNode, type GraphQLSchema } from "graphql";
import type { PrismaClient } from "../generated/prisma/client.js";
import { authenticateRequest } from "../http/request-auth.js";
import { createContext } from "../graphql/context.js";
import type { Logger } from "../logger.js";
import type { Services } from "../services.js";
import { restError } from "./respond.js";
import type { Route } from "./route.js";

type Deps = { schema: GraphQLSchema; prisma: PrismaClient; services: Services; logger: Logger };

/** Parses and validates every route's operation once, at start-up: a broken route never boots. */
function compile(route: Route, schema: GraphQLSchema): DocumentNode {
  const document = parse(route.operation);
  const errors = validate(schema, document);
  if (errors.length) throw new Error(`REST route ${route.method} ${route.path}: ${errors[0].message}`);
  return document;
}

export function restRouter(routes: Route[], deps: Deps): Router {
  const router = Router();
  for (const route of routes) {
    const document = compile(route, deps.schema);
    const method = route.method.toLowerCase() as "get" | "post" | "delete";
    router[method](route.path, async (req: Request, res: Response) => {
      const input = { params: req.params as Record<string, string>, query: req.query, body: (req.body ?? {}) as Record<string, unknown> };
      const result = await execute({
        schema: deps.schema,
        document,
        variableValues: route.variables?.(input) ?? {},
        contextValue: createContext(deps.services, deps.prisma, () => authenticateRequest(req, deps.services)),
      });
      if (result.errors?.length) {
        const error = restError(result.errors[0], deps.logger, route.errors);
        if (error.retryAfter) res.setHeader("Retry-After", String(error.retryAfter));
        res.status(error.status).json(error.body);
        return;
      }
      res.status(route.status ?? 200).json(route.result(result.data));
    });
  }
  return router;
}
