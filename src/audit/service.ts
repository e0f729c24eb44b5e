import { randomUUID } from "node:crypto";
import { isIP } from "node:net";
import type { AuthenticatedClient } from "../caller/authenticated-client.js";
import type { Sql } from "../db/sql.js";
import { AppError, badInput } from "../errors.js";
import type { PrismaClient } from "../generated/prisma/client.js";
import type { RequestInfo } from "../caller/request-info.js";
import { writeEntry, type AuditEntry, type AuditOutcome } from "../db/audit-scope.js";

const DEFAULT_PAGE = 20;
const MAX_PAGE = 100;

/** The audit log (SPEC §13): written by the pipeline and the transactions of mutations (src/db/audit-scope.ts); read here. */
export class AuditLogService {
  constructor(private readonly deps: { prisma: PrismaClient; sql: Sql }) {}

  /** A new entry for one mutation root field the caller runs. */
  entry(caller: AuthenticatedClient, operation: string, request: RequestInfo): AuditEntry {
    return {
      id: randomUUID(),
      clientId: caller.clientId,
      actorType: caller.method === "API_KEY" ? "api_key" : "session",
      actorId: caller.credentialId,
      operation,
      requestId: request.requestId,
      ip: isIP(request.ip) ? request.ip : null,
      targetIds: new Set(),
    };
  }

  /** Writes the entry's final outcome, after the operation (outside its transactions, which wrote it already when they committed). */
  finish(entry: AuditEntry, outcome: AuditOutcome): Promise<void> {
    return writeEntry(this.deps.sql, entry, outcome);
  }

  /** The client's entries, newest first, before the entry `after` (an id of its own). */
  async list(clientId: string, args: { after?: string | null; first?: number | null }) {
    const limit = args.first ?? DEFAULT_PAGE;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) throw badInput(`the page size (first; limit on REST) must be an integer from 1 to ${MAX_PAGE}`);
    let before: { at: Date; id: string } | undefined;
    if (args.after != null) {
      const cursor = /^[0-9a-f-]{36}$/i.test(args.after)
        ? await this.deps.prisma.auditLogEntry.findFirst({ where: { id: args.after, clientId }, select: { at: true, id: true } })
        : null;
      if (!cursor) throw new AppError("BAD_USER_INPUT", "after must be the id of one of your audit log entries", { param: "after" });
      before = cursor;
    }
    const rows = await this.deps.prisma.auditLogEntry.findMany({
      where: { clientId, ...(before && { OR: [{ at: { lt: before.at } }, { at: before.at, id: { lt: before.id } }] }) },
      orderBy: [{ at: "desc" }, { id: "desc" }],
      take: limit + 1,
    });
    return { entries: rows.slice(0, limit), hasMore: rows.length > limit };
  }
}
