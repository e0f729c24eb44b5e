import { z } from "zod";
import { graphql } from "../../graphql/typed.js";
import { doc, named } from "../docs.js";
import { examples } from "../examples.js";
import { integer, route } from "../route.js";

const AuditLogEntry = named("AuditLogEntry", z.object({
  id: doc.id.describe("pass it as `after` to read older entries"),
  at: doc.timestamp,
  actor: z.object({ type: z.enum(["api_key", "session"]), id: doc.id.describe("the API key's or the session's id") }),
  operation: z.string().describe("the GraphQL root field the request ran (POST /v1/user is createUser)"),
  targetIds: z.array(z.string()).describe("the ids it created or changed (none for a refusal)"),
  requestId: z.string(),
  ip: z.string().nullable().describe("the caller's address as TRUST_PROXY reads it; null when that is not an IP address"),
  outcome: z.enum(["succeeded", "refused", "failed"]).describe("refused: a 4xx answer; failed: a 5xx"),
  livemode: doc.livemode,
}));

export const auditLogRoutes = [
  route({
    method: "GET",
    path: "/v1/audit-log",
    operation: graphql(`query ListAuditLog($after: ID, $first: Int) {
      auditLog(after: $after, first: $first) {
        edges { node { id at actor { type id } operation targetIds requestId ip outcome livemode } }
        pageInfo { hasNextPage }
      }
    }`),
    variables: ({ query }) => ({ after: query.after, first: integer(query.limit) }),
    result: ({ auditLog }) => ({
      data: auditLog.edges.map(({ node }) => ({ ...node, actor: { ...node.actor, type: node.actor.type.toLowerCase() }, outcome: node.outcome.toLowerCase() })),
      hasMore: auditLog.pageInfo.hasNextPage,
    }),
    docs: {
      summary: "The audit log: every mutating operation, acted or refused, newest first",
      description:
        "Needs `api_keys:read` (a full key or a session has it). One entry per mutation root field a request ran, REST included. " +
        "Ids and names only: keys, codes, tokens and webhook secrets never appear.",
      query: z.object({
        after: z.string().optional().describe("an entry id: only older entries"),
        limit: z.int().min(1).max(100).optional().describe("1–100, default 20"),
      }),
      response: z.object({ data: z.array(AuditLogEntry), hasMore: z.boolean() }),
      errors: ["BAD_USER_INPUT", "FORBIDDEN"],
      example: { response: { data: [examples.auditLogEntry], hasMore: false } },
    },
  }),
];
