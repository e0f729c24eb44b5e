import { parsePhoneNumberFromString } from "libphonenumber-js/max";
import { z } from "zod";
import type { Prisma, PrismaClient, User } from "../generated/prisma/client.js";
import { isUniqueViolation } from "../db/errors.js";
import { prismaSql, type Sql } from "../db/sql.js";
import { AppError, notFound } from "../errors.js";
import { recordEvent } from "../events/log.js";
import { eventObject } from "../events/objects.js";
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

export const CreateUser = z.object({
  email,
  firstName: name("firstName"),
  lastName: name("lastName"),
  phoneNumber: mobileNumber,
  dob: pastDate,
});

type UserRow = Omit<User, "dob"> & { dob: string };

const USER_BY_ID = `SELECT "id", "clientId", "email", "firstName", "lastName", "phoneNumber", "dob"::text AS "dob", "createdAt", "updatedAt"
  FROM "users" WHERE "id" = $1 AND "clientId" = $2`;

export class UserService {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly sql: Sql,
  ) {}

  async create(clientId: string, input: unknown) {
    const user = parseInput(CreateUser, input);
    try {
      return await this.prisma.$transaction(async (tx) => {
        const created = await tx.user.create({ data: { ...user, dob: new Date(`${user.dob}T00:00:00.000Z`), clientId } });
        await recordEvent(prismaSql(tx), { clientId, userId: created.id, type: "user.created", object: eventObject.user(created) });
        return created;
      });
    } catch (err) {
      if (isUniqueViolation(err)) {
        throw new AppError("BAD_USER_INPUT", "A user with this email already exists");
      }
      throw err;
    }
  }

  /** Oldest first, so pages are stable while users are added. `query` carries GraphQL's nested selection. */
  list(clientId: string, args: { page?: number | null; limit?: number | null }, query: Prisma.UserFindManyArgs = {}) {
    const { page, limit } = parseInput(pageArgs(100, 10), {
      page: args.page ?? undefined,
      limit: args.limit ?? undefined,
    });
    return this.prisma.user.findMany({
      ...query,
      where: { clientId },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
      skip: (page - 1) * limit,
      take: limit,
    });
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
