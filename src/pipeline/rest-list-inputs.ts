import {
  getNullableType,
  isInputObjectType,
  isListType,
  typeFromAST,
  type DocumentNode,
  type GraphQLInputType,
  type GraphQLSchema,
} from "graphql";
import type { Plugin } from "graphql-yoga";
import { AppError } from "../errors.js";
import { maskError } from "../graphql/errors.js";
import type { Logger } from "../logger.js";
import { selectedOperation } from "./operations.js";
import type { TransportContext } from "../caller/request-info.js";

type Problem = { param: string; message: string };

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * GraphQL's input coercion reads a single value given for a list as a list of one (`"127.0.0.1"` as
 * `["127.0.0.1"]`). A REST body is JSON with fixed types (SPEC §6: a wrong type is a 400 naming the
 * field), so on the /v1 table a list field given anything but an array is refused before anything
 * runs: `allowedIps must be a list`. GraphQL clients keep the GraphQL coercion.
 */
export function useRestListInputs(logger: Logger): Plugin<TransportContext> {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      if (args.contextValue.requestInfo.transport !== "rest") return;
      const problem = nonListIn(args.schema, args.document, args.operationName, args.variableValues ?? {});
      if (problem) setResultAndStopExecution({ errors: [maskError(new AppError("BAD_USER_INPUT", problem.message, { param: problem.param }), logger)] });
    },
  };
}

/** The first list input of the operation's variables given a value that is not an array (null and absent are not values). */
function nonListIn(schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined, variables: Record<string, unknown>): Problem | undefined {
  const operation = selectedOperation(document, operationName);
  for (const definition of operation?.variableDefinitions ?? []) {
    const type = typeFromAST(schema, definition.type) as GraphQLInputType | undefined;
    const name = definition.variable.name.value;
    const problem = type && inValue(type, variables[name], name);
    if (problem) return problem;
  }
  return undefined;
}

/** `field`: the name the REST body knows the value by (an input object's field, or the variable). */
function inValue(type: GraphQLInputType, value: unknown, field: string): Problem | undefined {
  if (value === null || value === undefined) return undefined;
  const nullable = getNullableType(type);
  if (isListType(nullable)) {
    if (!Array.isArray(value)) return { param: field, message: `${field} must be a list` };
    for (const item of value) {
      const problem = inValue(nullable.ofType, item, field);
      if (problem) return problem;
    }
  } else if (isInputObjectType(nullable) && isPlainObject(value)) {
    for (const [name, inputField] of Object.entries(nullable.getFields())) {
      const problem = inValue(inputField.type, value[name], name);
      if (problem) return problem;
    }
  }
  return undefined;
}
