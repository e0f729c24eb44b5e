import { getNamedType, isObjectType, type GraphQLObjectType, type GraphQLSchema } from "graphql";
import { RESOURCES, type OperationPermission, type Resource } from "../caller/permissions.js";

/**
 * The resource each object type shows: selecting any of its fields, at any depth, needs that
 * resource's `read` (so `user(id) { email ledger { … } }` needs `ledger:read` besides `users:read`;
 * src/pipeline/permissions.ts says when a user named by its id needs no `users:read`). A new
 * object type must be listed here or in NEUTRAL_TYPES, or the schema refuses to build.
 */
export const TYPE_RESOURCES: Record<string, Resource> = {
  User: "users",
  Wallet: "wallets",
  VirtualCard: "cards",
  Card: "cards",
  CardTransaction: "cards",
  CardTransactionPage: "cards",
  CardAuthorization: "cards",
  VirtualAccount: "accounts",
  UsdcAccount: "accounts",
  Balance: "accounts",
  AccountBalance: "accounts",
  ClientBalance: "accounts",
  Deposit: "deposits",
  Withdrawal: "withdrawals",
  WithdrawalCurrency: "withdrawals",
  ConversionQuote: "conversions",
  Conversion: "conversions",
  LedgerEntry: "ledger",
  LedgerAccount: "ledger",
  LedgerChain: "ledger",
  LedgerVerification: "ledger",
  LedgerPage: "ledger",
  Event: "events",
  WebhookEndpoint: "events",
  DeletedWebhookEndpoint: "events",
  WebhookDelivery: "events",
  WebhookDeliveryAttempt: "events",
  ApiKey: "api_keys",
  CreatedApiKey: "api_keys",
  ApiKeyPermission: "api_keys",
  AuditLogEntry: "api_keys",
  AuditActor: "api_keys",
};

/** Types that show no resource of their own: the caller's client and session, plain answers, and the networks (the deployment's, not a client's). */
const NEUTRAL_TYPES = new Set(["Client", "OtpRequested", "SessionToken", "AuthStatus", "Success", "PageInfo", "ChainNetwork", "NetworkToken"]);

/** Relay wrappers (`…Connection`, `…Edge`) show only what their nodes show, which is checked on its own. */
const isRelayWrapper = (name: string) => /(Connection|Edge)$/.test(name);

/** The resource a type shows: its own, or for a Relay wrapper its nodes' (so `ledger { … }` needs ledger:read at `ledger`). */
export function resourceOfType(type: GraphQLObjectType): Resource | undefined {
  const own = TYPE_RESOURCES[type.name];
  if (own || !isRelayWrapper(type.name)) return own;
  const inner = getNamedType(type.getFields().edges?.type ?? type.getFields().node?.type);
  return inner && isObjectType(inner) ? resourceOfType(inner) : undefined;
}

/** At start-up: every root field declares its permission, and every object type is classified. */
export function assertPermissionsDeclared(schema: GraphQLSchema): void {
  const problems: string[] = [];
  for (const root of [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()]) {
    for (const field of Object.values(root?.getFields() ?? {})) {
      if (!isOperationPermission(field.extensions.permission)) problems.push(`${root!.name}.${field.name} declares no permission`);
    }
  }
  const roots = new Set([schema.getQueryType()?.name, schema.getMutationType()?.name, schema.getSubscriptionType()?.name]);
  for (const type of Object.values(schema.getTypeMap())) {
    // Duck-typed (object and interface types), not isObjectType: this runs as the schema module loads,
    // where a second copy of graphql (another module realm, as under some test runners) must not break it.
    if (!("getInterfaces" in type) || type.name.startsWith("__") || roots.has(type.name)) continue;
    if (!(type.name in TYPE_RESOURCES) && !NEUTRAL_TYPES.has(type.name) && !isRelayWrapper(type.name)) {
      problems.push(`type ${type.name} is not classified in src/graphql/type-resources.ts`);
    }
  }
  if (problems.length) throw new Error(`Permissions (SPEC §13): ${problems.join("; ")}`);
}

const isOperationPermission = (value: unknown): value is OperationPermission =>
  value === "public" ||
  value === "authenticated" ||
  (typeof value === "string" && /^(\w+):(read|write)$/.test(value) && (RESOURCES as readonly string[]).includes(value.split(":")[0]));
