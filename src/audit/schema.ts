import type { AuditLogEntry } from "../generated/prisma/client.js";
import { builder } from "../graphql/builder.js";
import { LIVEMODE_FIELD } from "../graphql/livemode.js";
import { clientIdOf } from "../graphql/context.js";
import { upperCased } from "../keys/schema.js";

const AuditActorType = builder.enumType("AuditActorType", { values: upperCased(["api_key", "session"] as const) });
const AuditOutcome = builder.enumType("AuditOutcome", {
  description: "SUCCEEDED: it acted; REFUSED: turned down for what was sent or allowed (a 4xx); FAILED: it could not be carried out (a 5xx).",
  values: upperCased(["succeeded", "refused", "failed"] as const),
});

const AuditActor = builder.objectRef<{ type: "api_key" | "session"; id: string }>("AuditActor").implement({
  fields: (t) => ({ type: t.field({ type: AuditActorType, resolve: (actor) => actor.type }), id: t.exposeID("id", { description: "the API key's or the session's id" }) }),
});

const AuditLogEntryRef = builder.prismaObject("AuditLogEntry", {
  description: "One mutating operation, acted or refused. Ids and names only: never a secret.",
  fields: (t) => ({
    id: t.exposeID("id"),
    livemode: t.boolean(LIVEMODE_FIELD),
    at: t.expose("at", { type: "DateTime" }),
    actor: t.field({ type: AuditActor, resolve: (entry) => ({ type: entry.actorType as "api_key" | "session", id: entry.actorId }) }),
    operation: t.exposeString("operation", { description: "the GraphQL root field the request ran (REST included: POST /v1/user is createUser)" }),
    targetIds: t.exposeIDList("targetIds", { description: "the ids it created or changed (none for a refusal)" }),
    requestId: t.exposeString("requestId"),
    ip: t.exposeString("ip", { nullable: true, description: "the caller's address as TRUST_PROXY reads it; null when what was read is not an IP address" }),
    outcome: t.field({ type: AuditOutcome, resolve: (entry) => entry.outcome as "succeeded" | "refused" | "failed" }),
  }),
});

const AuditLogEdge = builder.objectRef<AuditLogEntry>("AuditLogEdge").implement({
  fields: (t) => ({ cursor: t.exposeString("id"), node: t.field({ type: AuditLogEntryRef, resolve: (entry) => entry }) }),
});

const AuditLogConnection = builder.objectRef<{ entries: AuditLogEntry[]; hasMore: boolean }>("AuditLogConnection").implement({
  fields: (t) => ({
    edges: t.field({ type: [AuditLogEdge], resolve: (page) => page.entries }),
    pageInfo: t.field({
      type: builder.pageInfoRef(),
      description: "endCursor is the `after` of the next (older) page. The log pages forward only, newest first.",
      resolve: (page) => ({
        hasNextPage: page.hasMore,
        hasPreviousPage: false,
        startCursor: page.entries[0]?.id ?? null,
        endCursor: page.entries.at(-1)?.id ?? null,
      }),
    }),
  }),
});

builder.queryFields((t) => ({
  auditLog: t.field({
    permission: "api_keys:read",
    type: AuditLogConnection,
    description: "Who did what: the client's audit log, newest first, older than the entry `after`; first 1–100 (default 20).",
    args: { after: t.arg.id(), first: t.arg.int() },
    resolve: async (_root, args, ctx) => ctx.services.audit.list(await clientIdOf(ctx), args),
  }),
}));
