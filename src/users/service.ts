import { parsePhoneNumberFromString } from "libphonenumber-js/max";
import { z } from "zod";
import type { Prisma, PrismaClient, User } from "../generated/prisma/client.js";
import { isUniqueViolation } from "../db/errors.js";
import { prismaSql, type Sql } from "../db/sql.js";
import { inTransaction } from "../db/transaction.js";
import { AppError, notFound } from "../errors.js";
import { recordEvent } from "../events/log.js";
import { userObject } from "./representation.js";
import { mergeMetadata, metadataChanges, metadataFilter, newMetadata, type Metadata } from "../metadata.js";
import { email, pageArgs, parseInput, requireUuid } from "../validation.js";

const name = (field: string) =>
  z
    .string({ error: `${field} is required` })
    .trim()
    .min(1, `${field} must be 1 to 100 characters`)
    .max(100, `${field} must be 1 to 100 characters`);

const mobileNumber = z.string({ error: "phoneNumber is required" }).refine((value) => {
  const parsed = parsePhoneNumberFromString(value);
  const type = parsed?.getType();
  return parsed?.isValid() && parsed.number === value && (type === "MOBILE" || type === "FIXED_LINE_OR_MOBILE");
}, "phoneNumber must be a valid E.164 mobile number, such as +14155552671");

const pastDate = z
  .string({ error: "dob is required" })
  .regex(/^\d{4}-\d{2}-\d{2}$/, "dob must be a date YYYY-MM-DD")
  .refine((value) => {
    const date = new Date(`${value}T00:00:00.000Z`);
    return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(value) && date < new Date() && date.getUTCFullYear() >= 1900;
  }, "dob must be a real past date YYYY-MM-DD");

const EXTERNAL_ID_LENGTH = 180;
const externalId = (field: string) =>
  z
    .string({ error: `${field} must be text of 1 to ${EXTERNAL_ID_LENGTH} characters` })
    .min(1, `${field} must be 1 to ${EXTERNAL_ID_LENGTH} characters`)
    .max(EXTERNAL_ID_LENGTH, `${field} must be 1 to ${EXTERNAL_ID_LENGTH} characters`)
    .describe(`your own id for the user: unique among your users, 1–${EXTERNAL_ID_LENGTH} characters`);

export const CreateUser = z.object({
  email,
  firstName: name("firstName"),
  lastName: name("lastName"),
  phoneNumber: mobileNumber,
  dob: pastDate,
  externalId: externalId("externalId").nullish(),
  metadata: metadataChanges,
});

export const UpdateUser = z
  .object({
    externalId: externalId("externalId").nullish().describe(`your own id for the user (1–${EXTERNAL_ID_LENGTH} characters, unique); null removes it`),
    metadata: metadataChanges,
  })
  .refine((update) => update.externalId !== undefined || update.metadata.remove.length + Object.keys(update.metadata.set).length > 0, {
    message: "Nothing to update: send metadata or externalId",
  });

/** The list's filters: both optional, combined with AND. */
const UserFilters = z.object({ externalId: externalId("externalId").optional(), metadata: metadataFilter.optional() });

type UserRow = Omit<User, "dob"> & { dob: string };

const USER_BY_ID = `SELECT "id", "clientId", "email", "firstName", "lastName", "phoneNumber", "dob"::text AS "dob", "externalId", "metadata", "createdAt", "updatedAt"
  FROM "users" WHERE "id" = $1 AND "clientId" = $2`;

/**
 * The ids of a filtered page, oldest first. `externalId =` is served by the unique (clientId,
 * externalId) index, `metadata @>` (every pair present) by the GIN index on metadata. Exported for
 * the test that shows the plan (test/user-metadata.test.ts).
 */
export function filteredUserIdsQuery(clientId: string, filters: { externalId?: string; metadata?: Metadata }, window: { limit: number; offset: number }) {
  const values: unknown[] = [clientId, window.limit, window.offset];
  const conditions = [`"clientId" = $1::uuid`];
  if (filters.externalId !== undefined) {
    values.push(filters.externalId);
    conditions.push(`"externalId" = $${values.length}::text`);
  }
  if (filters.metadata !== undefined) {
    values.push(JSON.stringify(filters.metadata));
    conditions.push(`"metadata" @> $${values.length}::jsonb`);
  }
  return {
    name: `users_filtered_${filters.externalId === undefined ? "" : "e"}${filters.metadata === undefined ? "" : "m"}`,
    text: `SELECT "id" FROM "users" WHERE ${conditions.join(" AND ")} ORDER BY "createdAt" ASC, "id" ASC LIMIT $2::int OFFSET $3::int`,
    values,
  };
}

export class UserService {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly sql: Sql,
  ) {}

  /** A second user with the same externalId is a CONFLICT naming the existing one (the unique index decides races). */
  async create(clientId: string, input: unknown) {
    const { metadata, ...user } = parseInput(CreateUser, input);
    try {
      return await this.prisma.$transaction(async (tx) => {
        const created = await tx.user.create({
          data: { ...user, dob: new Date(`${user.dob}T00:00:00.000Z`), clientId, metadata: newMetadata(metadata) },
        });
        await recordEvent(prismaSql(tx), { clientId, userId: created.id, type: "user.created", object: userObject(created) });
        return created;
      });
    } catch (err) {
      if (isUniqueViolation(err)) {
        await this.refuseTakenExternalId(clientId, user.externalId);
        throw new AppError("BAD_USER_INPUT", "A user with this email already exists");
      }
      throw err;
    }
  }

  /**
   * Merges metadata (a key set to "" or null is removed; the key limit applies to the result) and
   * sets or removes (null) the externalId, under the row's lock so concurrent updates both apply.
   */
  async update(clientId: string, userId: unknown, input: unknown) {
    const id = requireUuid(userId, "userId");
    const update = parseInput(UpdateUser, input);
    try {
      return await inTransaction(this.prisma, async (tx) => {
        const [current] = await tx.$queryRaw<{ metadata: unknown }[]>`SELECT "metadata" FROM "users" WHERE "id" = ${id}::uuid AND "clientId" = ${clientId}::uuid FOR UPDATE`;
        if (!current) throw notFound("User");
        const metadata = mergeMetadata(current.metadata, update.metadata);
        const updated = await tx.user.update({
          where: { id },
          data: { metadata, ...(update.externalId === undefined ? {} : { externalId: update.externalId }) },
        });
        await recordEvent(prismaSql(tx), { clientId, userId: id, type: "user.updated", object: userObject(updated) });
        return updated;
      });
    } catch (err) {
      if (isUniqueViolation(err)) await this.refuseTakenExternalId(clientId, update.externalId);
      throw err;
    }
  }

  /** After a unique violation: when the externalId is another user's, the CONFLICT that names that user. */
  private async refuseTakenExternalId(clientId: string, externalId: string | null | undefined) {
    if (!externalId) return;
    const existing = await this.prisma.user.findUnique({ where: { clientId_externalId: { clientId, externalId } }, select: { id: true } });
    if (existing) throw new AppError("CONFLICT", "A user with this externalId already exists", { details: { id: existing.id }, param: "externalId" });
  }

  /**
   * Oldest first, so pages are stable while users are added; filtered by externalId and metadata
   * pairs (all must match) when given. `query` carries GraphQL's nested selection.
   */
  async list(
    clientId: string,
    args: { page?: number | null; limit?: number | null; externalId?: string | null; metadata?: unknown },
    query: Prisma.UserFindManyArgs = {},
  ) {
    const { page, limit } = parseInput(pageArgs(100, 10), {
      page: args.page ?? undefined,
      limit: args.limit ?? undefined,
    });
    const filters = parseInput(UserFilters, { externalId: args.externalId ?? undefined, metadata: args.metadata ?? undefined });
    const order: Prisma.UserOrderByWithRelationInput[] = [{ createdAt: "asc" }, { id: "asc" }];
    if (filters.externalId === undefined && filters.metadata === undefined) {
      return this.prisma.user.findMany({ ...query, where: { clientId }, orderBy: order, skip: (page - 1) * limit, take: limit });
    }
    const statement = filteredUserIdsQuery(clientId, filters, { limit, offset: (page - 1) * limit });
    const rows = await this.sql.query<{ id: string }>(statement.name, statement.text, statement.values);
    if (!rows.length) return [];
    return this.prisma.user.findMany({ ...query, where: { clientId, id: { in: rows.map((row) => row.id) } }, orderBy: order });
  }

  /**
   * Another client's user is exactly as unknown as a user that does not exist. `query` carries
   * GraphQL's nested selection; without one (the hot lookup) the row is read by a prepared statement.
   */
  async get(clientId: string, userId: unknown, query: Omit<Prisma.UserFindUniqueArgs, "where"> = {}) {
    const id = requireUuid(userId, "userId");
    const user = Object.keys(query).length === 0 ? await this.byId(clientId, id) : await this.prisma.user.findUnique({ ...query, where: { id, clientId } });
    if (!user) throw notFound("User");
    return user;
  }

  private async byId(clientId: string, id: string): Promise<User | undefined> {
    const [row] = await this.sql.query<UserRow>("user_by_id", USER_BY_ID, [id, clientId]);
    return row && { ...row, dob: new Date(`${row.dob}T00:00:00.000Z`) };
  }
}
