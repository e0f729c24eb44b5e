import {
  getNamedType,
  getNullableType,
  isCompositeType,
  isListType,
  isObjectType,
  Kind,
  type DocumentNode,
  type ExecutionResult,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLObjectType,
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
/**
 * Int arguments that place a page rather than size it. Every other Int argument of a field that
 * returns a list or a page (`limit`, `first`, `last`, or any new name) counts as its size: an
 * argument unknown here overstates a cost, it never hides one.
 */
const POSITION_ARGUMENTS = new Set(["page", "offset", "skip"]);
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
 * around it. A list's size is its own size argument; else, inside a sized page (a connection's
 * `edges`, a LedgerPage's `transactions`), the page's size; else its field's `maxListSize`, the
 * bound every list without a size argument declares (see unboundedLists). A field with a
 * `maxPerOperation` extension (one that writes a row, like conversionQuote) is refused when the
 * operation selects it more often than that, aliases and fragments included.
 */
export function operationCost(args: CostArgs): number {
  const byName = documentCosts(args.schema, args.document);
  const known = byName.get(args.operationName ?? "");
  if (known !== undefined) return known;
  const { cost, operationFound, variablesRead } = walkCost(args);
  // A cost that no variable sized is the document's own: the same for every request that sends it.
  // Kept only under the name of an operation the document has, so names sent at will add nothing.
  if (operationFound && !variablesRead) byName.set(args.operationName ?? "", cost);
  return cost;
}

/**
 * Costs that depend on the document alone, by schema, document and operation name. Documents come
 * from yoga's parse cache (GraphQL) or are the /v1 table's own, so each is one object for as long
 * as it is in use, and an entry goes with its document.
 */
const costsBySchema = new WeakMap<GraphQLSchema, WeakMap<DocumentNode, Map<string, number>>>();

function documentCosts(schema: GraphQLSchema, document: DocumentNode): Map<string, number> {
  let byDocument = costsBySchema.get(schema);
  if (!byDocument) costsBySchema.set(schema, (byDocument = new WeakMap()));
  let byName = byDocument.get(document);
  if (!byName) byDocument.set(document, (byName = new Map()));
  return byName;
}

function walkCost({ schema, document, operationName, variableValues }: CostArgs): { cost: number; operationFound: boolean; variablesRead: boolean } {
  let variablesRead = false;
  const sizeAskedFor = (field: GraphQLField<unknown, unknown>, node: Parameters<typeof listSize>[1]) => {
    variablesRead = true;
    return listSize(field, node, variableValues);
  };
  const operation = selectedOperation(document, operationName);
  const root = operation && schema.getRootType(operation.operation);
  if (!operation || !root) return { cost: 0, operationFound: false, variablesRead };
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }

  const uses = new Map<GraphQLField<unknown, unknown>, number>();
  const costOf = (selectionSet: SelectionSetNode, parent: GraphQLNamedType, insideList: boolean, pageSize?: number): number => {
    let total = 0;
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.INLINE_FRAGMENT) {
        const type = selection.typeCondition ? (schema.getType(selection.typeCondition.name.value) ?? parent) : parent;
        total += costOf(selection.selectionSet, type, insideList, pageSize);
        continue;
      }
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const fragment = fragments.get(selection.name.value);
        if (fragment) total += costOf(fragment.selectionSet, schema.getType(fragment.typeCondition.name.value) ?? parent, insideList, pageSize);
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
      const maxUses = field.extensions.maxPerOperation;
      if (typeof maxUses === "number") {
        uses.set(field, (uses.get(field) ?? 0) + 1);
        if (uses.get(field)! > maxUses) throw new AppError("BAD_USER_INPUT", `${name} can be asked for at most ${maxUses} times in one operation`, { param: name });
      }
      const type = getNamedType(field.type);
      if (!isCompositeType(type) || !selection.selectionSet) continue;
      const isList = isListType(getNullableType(field.type));
      const sized = sizeArguments(field).length > 0;
      const size = !isList ? 1 : sized ? sizeAskedFor(field, selection) : (pageSize ?? declaredBound(field) ?? DEFAULT_PAGE_SIZE);
      const childPageSize = !isList && sized ? sizeAskedFor(field, selection) : undefined;
      const own = name === "node" && isEdgeType(parent) ? 0 : 1;
      total += size * (own + costOf(selection.selectionSet, type, insideList || isList, childPageSize));
    }
    return total;
  };
  const cost = costOf(operation.selectionSet, root, false);
  return { cost, operationFound: true, variablesRead };
}

/** The Int arguments of a field that size what it returns. */
const sizeArguments = (field: GraphQLField<unknown, unknown>) =>
  field.args.filter((arg) => {
    const type = getNullableType(arg.type);
    return !isListType(type) && getNamedType(type).name === "Int" && !POSITION_ARGUMENTS.has(arg.name);
  });

const declaredBound = (field: GraphQLField<unknown, unknown>) => {
  const bound = field.extensions.maxListSize;
  return typeof bound === "number" ? bound : undefined;
};

/**
 * Fields (`Type.field`) that return a list of objects with neither a size argument, nor a sized page
 * around them, nor a declared `maxListSize` extension: lists whose size no query can bound. The
 * schema must have none (a test holds it to that).
 */
export function unboundedLists(schema: GraphQLSchema): string[] {
  const fields = Object.values(schema.getTypeMap())
    .filter((type): type is GraphQLObjectType => isObjectType(type) && !type.name.startsWith("__"))
    .flatMap((type) => Object.values(type.getFields()).map((field) => ({ parent: type, field })));
  // Types some field returns as one object with a size argument: pages whose lists take that size.
  const pages = new Set(fields.filter(({ field }) => !isListType(getNullableType(field.type)) && sizeArguments(field).length).map(({ field }) => getNamedType(field.type).name));
  return fields
    .filter(({ field }) => isListType(getNullableType(field.type)) && isCompositeType(getNamedType(field.type)))
    .filter(({ parent, field }) => !sizeArguments(field).length && declaredBound(field) === undefined && !pages.has(parent.name))
    .map(({ parent, field }) => `${parent.name}.${field.name}`);
}

const hasFields = (type: GraphQLNamedType, names: string[]) => "getFields" in type && names.every((name) => name in type.getFields());
const isEdgeType = (type: GraphQLNamedType) => hasFields(type, ["node", "cursor"]);

/** The size a sized field is asked for (the largest of its size arguments), or its default page size. */
function listSize(field: GraphQLField<unknown, unknown>, node: Parameters<typeof getArgumentValues>[1], variables: CostArgs["variableValues"]): number {
  try {
    const values = getArgumentValues(field, node, variables ?? {});
    const sizes = sizeArguments(field).map((arg) => values[arg.name]).filter((value): value is number => typeof value === "number" && value > 0);
    const defaultSize = field.extensions.defaultPageSize;
    return sizes.length ? Math.max(...sizes) : typeof defaultSize === "number" ? defaultSize : DEFAULT_PAGE_SIZE;
  } catch {
    // Arguments that do not coerce are refused by execution itself, with a better message.
    return DEFAULT_PAGE_SIZE;
  }
}
