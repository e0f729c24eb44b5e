import {
  getNamedType,
  getNullableType,
  isListType,
  isNonNullType,
  isObjectType,
  Kind,
  type DocumentNode,
  type ExecutionResult,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from "graphql";
import type { Plugin } from "graphql-yoga";
import { allows, forbidden, permissionOf, type AccessLevel, type Permission, type Resource } from "../caller/permissions.js";
import { authenticationOf, type Services } from "../graphql/context.js";
import { ApiError } from "../graphql/errors.js";
import { resourceOfType } from "../graphql/type-resources.js";
import { selectedOperation } from "./operations.js";
import type { TransportContext } from "../caller/request-info.js";

/** One permission an operation needs, and the response path of the (first) field that needs it. */
export type PermissionNeed = { permission: Permission; path: readonly string[] };

/**
 * The permission rule (SPEC §13), the one place that decides what an operation needs and whether the
 * caller's credential allows it, for every transport: GraphQL over HTTP, the /v1 table (which runs
 * GraphQL operations), SSE and graphql-ws (onSubscribe). A root field needs what it declares beside
 * its definition (`permission`, src/graphql/permissions-plugin.ts); a field at any depth whose type
 * shows a resource (src/graphql/type-resources.ts) needs that resource's `read`, except an object
 * named by its id only to reach other resources (`user(id) { ledger { … } }` needs `ledger:read`
 * alone: it shows nothing of the user the caller did not name). An operation that
 * needs anything the credential lacks is refused whole, before any field runs (a mutation never
 * half-acts), with one FORBIDDEN error per permission naming it and the field that needs it; over
 * HTTP the status is 403. Full keys and sessions skip the walk; what a document needs is worked out
 * once per parsed document (yoga caches documents, and the /v1 table's are constants).
 */
export function usePermissions(deps: { services: Services }): Plugin<TransportContext> {
  async function check(
    scope: TransportContext,
    schema: GraphQLSchema,
    document: DocumentNode,
    operationName: string | null | undefined,
    refuse: (result: ExecutionResult) => void,
  ) {
    // Admission ran first: without a credential only a public operation gets here, and it needs nothing.
    const caller = await authenticationOf(scope, deps.services).catch(() => undefined);
    if (!caller || caller.permissions === null) return;
    const operation = selectedOperation(document, operationName);
    if (!operation) return;
    const missing = permissionsNeeded(schema, document, operation).filter((need) => !allows(caller.permissions, need.permission));
    if (missing.length) refuse({ errors: missing.map((need) => refusal(need, scope.requestInfo.requestId)) });
  }

  return {
    async onExecute({ args, setResultAndStopExecution }) {
      await check(args.contextValue, args.schema, args.document, args.operationName, setResultAndStopExecution);
    },
    async onSubscribe({ args, setResultAndStopExecution }) {
      await check(args.contextValue, args.schema, args.document, args.operationName, setResultAndStopExecution);
    },
  };
}

function refusal(need: PermissionNeed, requestId: string): ApiError {
  const { message } = forbidden(need.permission);
  return new ApiError(message, { path: need.path, extensions: { code: "FORBIDDEN", requestId, http: { status: 403 } } });
}

const cache = new WeakMap<OperationDefinitionNode, PermissionNeed[]>();

/** What an operation needs, each permission once (with the first field that needs it), in document order. */
export function permissionsNeeded(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode): PermissionNeed[] {
  const known = cache.get(operation);
  if (known) return known;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  // Per resource, the strongest level needed (write implies read) and the first field that needs it.
  const needs = new Map<Resource, PermissionNeed>();
  const need = (permission: Permission, path: readonly string[]) => {
    const [resource, level] = permission.split(":") as [Resource, AccessLevel];
    const known = needs.get(resource);
    if (!known || (level === "write" && known.permission.endsWith(":read"))) needs.set(resource, { permission, path: known?.path ?? path });
  };

  const walk = (parent: GraphQLObjectType, selectionSet: SelectionSetNode, path: readonly string[], spread: ReadonlySet<string>) => {
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        const field = parent.getFields()[selection.name.value];
        if (!field) continue; // __typename, introspection, or a field validation refuses
        const fieldPath = [...path, selection.alias?.value ?? selection.name.value];
        const type = getNamedType(field.type);
        const resource = isObjectType(type) ? resourceOfType(type) : undefined;
        const read = resource && permissionOf(resource, "read");
        const passedThrough = !!resource && isObjectType(type) && isLookupById(field) && !!selection.selectionSet && onlyReachesOthers(type, selection.selectionSet, fragments, schema);
        const declared = field.extensions.permission;
        if (typeof declared === "string" && declared.includes(":") && !(passedThrough && declared === read)) need(declared as Permission, fieldPath);
        if (read && !passedThrough) need(read, fieldPath);
        if (selection.selectionSet && isObjectType(type)) walk(type, selection.selectionSet, fieldPath, spread);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const type = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : parent;
        if (isObjectType(type)) walk(type, selection.selectionSet, path, spread);
      } else {
        const name = selection.name.value;
        const fragment = fragments.get(name);
        const type = fragment && schema.getType(fragment.typeCondition.name.value);
        if (fragment && !spread.has(name) && isObjectType(type)) walk(type, fragment.selectionSet, path, new Set([...spread, name]));
      }
    }
  };

  const root = schema.getRootType(operation.operation);
  if (root) walk(root, operation.selectionSet, [], new Set());
  const result = [...needs.values()];
  cache.set(operation, result);
  return result;
}

/** A field that names one object by its id (`user(id: …)`), as opposed to a list or a search. */
function isLookupById(field: GraphQLField<unknown, unknown>): boolean {
  if (isListType(getNullableType(field.type))) return false;
  return field.args.some((arg) => arg.name === "id" && isNonNullType(arg.type) && getNamedType(arg.type).name === "ID");
}

/**
 * Whether a selection on an object shows nothing of the object's own (nothing but `id`, which the
 * caller named, and `__typename`) and reaches at least one field that shows a resource of its own
 * (`user(id) { ledgerPage { … } }`): the object is only the way to what the caller reads.
 */
function onlyReachesOthers(type: GraphQLObjectType, selectionSet: SelectionSetNode, fragments: ReadonlyMap<string, FragmentDefinitionNode>, schema: GraphQLSchema): boolean {
  let reaches = false;
  const pending: [GraphQLObjectType, SelectionSetNode][] = [[type, selectionSet]];
  const spread = new Set<string>();
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [parent, selections] = next;
    for (const selection of selections.selections) {
      if (selection.kind === Kind.FIELD) {
        if (selection.name.value === "id" || selection.name.value === "__typename") continue;
        const fieldType = getNamedType(parent.getFields()[selection.name.value]?.type);
        if (!fieldType || !isObjectType(fieldType) || !resourceOfType(fieldType)) return false;
        reaches = true;
      } else {
        const fragment = selection.kind === Kind.INLINE_FRAGMENT ? selection : fragments.get(selection.name.value);
        if (!fragment || (selection.kind === Kind.FRAGMENT_SPREAD && spread.has(selection.name.value))) continue;
        if (selection.kind === Kind.FRAGMENT_SPREAD) spread.add(selection.name.value);
        const condition = fragment.typeCondition ? schema.getType(fragment.typeCondition.name.value) : parent;
        if (isObjectType(condition)) pending.push([condition, fragment.selectionSet]);
      }
    }
  }
  return reaches;
}
