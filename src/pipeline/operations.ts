import {
  getDirectiveValues,
  getOperationAST,
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  Kind,
  type DocumentNode,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
  type SelectionNode,
  type SelectionSetNode,
} from "graphql";

/** Root fields anyone may call: signing in needs no credential. */
const PUBLIC_ROOT_FIELDS = new Set(["requestOtp", "verifyOtp", "__typename"]);
const INTROSPECTION_ROOT_FIELDS = new Set(["__schema", "__type"]);
/** Sign-in operations get their own, tighter, per-address budget (they are what a password guesser calls). */
export const SIGN_IN_ROOT_FIELDS = new Set(["requestOtp", "verifyOtp"]);

/** The names of the operation's root fields, or undefined when they are not all plain fields (fragments at the root). */
export function rootFieldNames(operation: OperationDefinitionNode): string[] | undefined {
  const names: string[] = [];
  for (const selection of operation.selectionSet.selections) {
    if (selection.kind !== Kind.FIELD) return undefined;
    names.push(selection.name.value);
  }
  return names;
}

/** A root field as its operation selects it: its response key (alias or name) and its name. */
export type RootField = { key: string; name: string };

/**
 * Every root field the operation selects, through fragments at the root (spread or inline), each
 * response key once, in document order; fields `@skip`ped or not `@include`d leave out. A directive
 * whose variable cannot be read counts as selecting the field (a refused document's fields are all
 * reported, never fewer).
 */
export function rootFieldsOf(document: DocumentNode, operation: OperationDefinitionNode, variables: Record<string, unknown> | null | undefined): RootField[] {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const fields = new Map<string, RootField>();
  const collect = (selectionSet: SelectionSetNode, spread: ReadonlySet<string>) => {
    for (const selection of selectionSet.selections) {
      if (!isSelected(selection, variables ?? {})) continue;
      if (selection.kind === Kind.FIELD) {
        const key = selection.alias?.value ?? selection.name.value;
        if (!fields.has(key)) fields.set(key, { key, name: selection.name.value });
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        collect(selection.selectionSet, spread);
      } else {
        const fragment = fragments.get(selection.name.value);
        if (fragment && !spread.has(fragment.name.value)) collect(fragment.selectionSet, new Set([...spread, fragment.name.value]));
      }
    }
  };
  collect(operation.selectionSet, new Set());
  return [...fields.values()];
}

function isSelected(selection: SelectionNode, variables: Record<string, unknown>): boolean {
  try {
    if (getDirectiveValues(GraphQLSkipDirective, selection, variables)?.if === true) return false;
    return getDirectiveValues(GraphQLIncludeDirective, selection, variables)?.if !== false;
  } catch {
    return true;
  }
}

export function selectedOperation(document: DocumentNode | undefined, operationName: string | null | undefined) {
  return document ? (getOperationAST(document, operationName) ?? undefined) : undefined;
}

/** Whether an operation needs no credential: only sign-in fields, `__typename`, and introspection while it is enabled. */
export function isPublicOperation(operation: OperationDefinitionNode | undefined, introspection: boolean): boolean {
  if (!operation || operation.operation === "subscription") return false;
  const names = rootFieldNames(operation);
  return !!names?.every((name) => PUBLIC_ROOT_FIELDS.has(name) || (introspection && INTROSPECTION_ROOT_FIELDS.has(name)));
}

export function isSignInOperation(operation: OperationDefinitionNode | undefined): boolean {
  return !!operation && !!rootFieldNames(operation)?.some((name) => SIGN_IN_ROOT_FIELDS.has(name));
}

/** Whether every root field is introspection (such documents are exempt from the depth limit while introspection is on). */
export function isIntrospectionOnly(document: DocumentNode): boolean {
  return document.definitions.every(
    (definition) =>
      definition.kind !== Kind.OPERATION_DEFINITION ||
      !!rootFieldNames(definition)?.every((name) => INTROSPECTION_ROOT_FIELDS.has(name) || name === "__typename"),
  );
}
