import { getOperationAST, Kind, type DocumentNode, type OperationDefinitionNode } from "graphql";

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
