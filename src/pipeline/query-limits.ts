import {
  getNamedType,
  getNullableType,
  isCompositeType,
  isListType,
  Kind,
  type DocumentNode,
  type ExecutionResult,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  type SelectionSetNode,
  type ValidationContext,
  type GraphQLError,
} from "graphql";
import { getArgumentValues } from "graphql/execution/values.js";
import type { Plugin } from "graphql-yoga";
import { EnvelopArmorPlugin } from "@escape.tech/graphql-armor";
import { maxDepthRule } from "@escape.tech/graphql-armor-max-depth";
import { AppError } from "../errors.js";
import { maskError } from "../graphql/errors.js";
import type { Logger } from "../logger.js";
import { isIntrospectionOnly, selectedOperation } from "./operations.js";

export const MAX_DEPTH = 8;
/** Objects one operation may ask for, counting each list at the size it asks for. */
export const MAX_COST = 5000;
/** A list asked for without a size: the page size its field defaults to at most (unless its `defaultPageSize` extension says). */
const DEFAULT_PAGE_SIZE = 100;
/** A list with no size argument (a user's accounts, balances, one page of card transactions). */
const UNPAGED_LIST_SIZE = 20;
const SIZE_ARGUMENTS = ["limit", "first", "last"];
/** Fields too heavy to ask for once per item of a list: they recompute a whole ledger. */
const NOT_IN_LISTS = new Set(["User.ledgerVerification"]);

/**
 * Armor's static limits (aliases, directives, tokens, field suggestions) and the depth limit, waived
 * for introspection-only documents while introspection is on (so code generators work).
 */
export function useStaticQueryLimits(options: { introspection: boolean }): Plugin[] {
  return [
    EnvelopArmorPlugin({
      maxDepth: { enabled: false },
      costLimit: { enabled: false },
      maxAliases: { n: 20, ...asValidationError },
      maxDirectives: { n: 20, ...asValidationError },
      maxTokens: { n: 2000 },
      blockFieldSuggestion: { enabled: !options.introspection },
    }),
    {
      onValidate({ addValidationRule }) {
        const depthRule = maxDepthRule({ n: MAX_DEPTH, ...asValidationError });
        addValidationRule((context: ValidationContext) =>
          options.introspection && isIntrospectionOnly(context.getDocument()) ? {} : depthRule(context),
        );
      },
    },
  ];
}

/**
 * Armor throws its refusals out of validation by default, which yoga then answers as a 200 with an
 * error; reported as validation errors they are the spec's 400 (and graphql-ws gets them as errors).
 */
const asValidationError = {
  propagateOnRejection: false,
  onReject: [(ctx: ValidationContext | null, error: GraphQLError) => ctx?.reportError(error)],
};

/** At execution, when variables are known: the operation's cost, multiplying by the list sizes asked for. */
export function useListAwareCost(logger: Logger): Plugin {
  const check = (args: CostArgs, refuse: (result: ExecutionResult) => void) => {
    try {
      const cost = operationCost(args);
      if (cost > MAX_COST) {
        throw new AppError("BAD_USER_INPUT", `Query cost ${cost} exceeds ${MAX_COST}: ask for smaller pages or fewer nested lists`);
      }
    } catch (error) {
      refuse({ errors: [maskError(error, logger)] });
    }
  };
  return {
    onExecute({ args, setResultAndStopExecution }) {
      check(args, setResultAndStopExecution);
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      check(args, setResultAndStopExecution);
    },
  };
}

type CostArgs = {
  schema: GraphQLSchema;
  document: DocumentNode;
  operationName?: string | null;
  variableValues?: Record<string, unknown> | null;
};

/**
 * Objects the operation may produce: each composite field counts 1, times the sizes of the lists
 * around it. A connection's size (`first`/`last`) is the size of its `edges`, whose `node` is the edge's
 * one object (counted once).
 */
export function operationCost({ schema, document, operationName, variableValues }: CostArgs): number {
  const operation = selectedOperation(document, operationName);
  const root = operation && schema.getRootType(operation.operation);
  if (!operation || !root) return 0;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }

  const costOf = (selectionSet: SelectionSetNode, parent: GraphQLNamedType, insideList: boolean, edgesSize?: number): number => {
    let total = 0;
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.INLINE_FRAGMENT) {
        const type = selection.typeCondition ? (schema.getType(selection.typeCondition.name.value) ?? parent) : parent;
        total += costOf(selection.selectionSet, type, insideList, edgesSize);
        continue;
      }
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const fragment = fragments.get(selection.name.value);
        if (fragment) total += costOf(fragment.selectionSet, schema.getType(fragment.typeCondition.name.value) ?? parent, insideList, edgesSize);
        continue;
      }
      const name = selection.name.value;
      // Introspection is bounded by the schema's own size (and refused by validation when it is off).
      if (name.startsWith("__")) continue;
      const field = "getFields" in parent ? (parent.getFields()[name] as GraphQLField<unknown, unknown> | undefined) : undefined;
      if (!field) continue;
      if (insideList && NOT_IN_LISTS.has(`${parent.name}.${name}`)) {
        throw new AppError("BAD_USER_INPUT", `${name} cannot be asked for inside a list: ask for it on one ${parent.name}`, { param: name });
      }
      const type = getNamedType(field.type);
      if (!isCompositeType(type) || !selection.selectionSet) continue;
      const isList = isListType(getNullableType(field.type));
      const isConnection = !isList && isConnectionType(type);
      const size = isList ? (name === "edges" && edgesSize !== undefined ? edgesSize : listSize(field, selection, variableValues)) : 1;
      const childEdgesSize = isConnection ? listSize(field, selection, variableValues) : undefined;
      const own = name === "node" && isEdgeType(parent) ? 0 : 1;
      total += size * (own + costOf(selection.selectionSet, type, insideList || isList, childEdgesSize));
    }
    return total;
  };
  return costOf(operation.selectionSet, root, false);
}

const hasFields = (type: GraphQLNamedType, names: string[]) => "getFields" in type && names.every((name) => name in type.getFields());
const isConnectionType = (type: GraphQLNamedType) => hasFields(type, ["edges", "pageInfo"]);
const isEdgeType = (type: GraphQLNamedType) => hasFields(type, ["node", "cursor"]);

function listSize(field: GraphQLField<unknown, unknown>, node: Parameters<typeof getArgumentValues>[1], variables: CostArgs["variableValues"]): number {
  const sizeArguments = field.args.filter((arg) => SIZE_ARGUMENTS.includes(arg.name));
  if (!sizeArguments.length) return UNPAGED_LIST_SIZE;
  try {
    const values = getArgumentValues(field, node, variables ?? {});
    const sizes = sizeArguments.map((arg) => values[arg.name]).filter((value): value is number => typeof value === "number" && value > 0);
    const defaultSize = field.extensions.defaultPageSize;
    return sizes.length ? Math.max(...sizes) : typeof defaultSize === "number" ? defaultSize : DEFAULT_PAGE_SIZE;
  } catch {
    // Arguments that do not coerce are refused by execution itself, with a better message.
    return DEFAULT_PAGE_SIZE;
  }
}
