import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { Prisma, type PrismaClient } from "../generated/prisma/client.js";
import { badInput, notFound } from "../errors.js";
import { recordEvent } from "../events/log.js";
import { eventObject } from "../events/objects.js";
import { requireUuid } from "../validation.js";
import type { CredentialCache } from "../auth/credential-cache.js";
import { prismaSql } from "../db/sql.js";
import { inTransaction } from "../db/transaction.js";
import { includes, PermissionsInput, storedPermissions, type Permissions } from "../auth/permissions.js";
import { AppError } from "../errors.js";
import { parseInput } from "../validation.js";
import { z } from "zod";

const KEY_PATTERN = /^(fpk_[0-9a-f]{12})\.([A-Za-z0-9_-]{43})$/;
/** lastUsedAt is written at most once a minute per key. */
const LAST_USED_RESOLUTION_MS = 60_000;

type KeyRow = { id: string; clientId: string; hash: string; lastUsedAt: Date | null; revokedAt: Date | null; permissions: unknown };

export const ApiKeyInput = z
  .object({
    name: z.string().trim().min(1, "name must not be empty").max(100, "name must be at most 100 characters").nullish(),
    permissions: PermissionsInput.nullish(),
  })
  .nullish();

const sha256 = (text: string) => createHash("sha256").update(text).digest();

/** Keys not revoked that one client may hold. */
export const MAX_ACTIVE_KEYS = 100;
/** Revoked keys the list shows (the most recently revoked). */
const LISTED_REVOKED_KEYS = 100;
/** The most keys the list returns. */
export const MAX_LISTED_KEYS = MAX_ACTIVE_KEYS + LISTED_REVOKED_KEYS;

export class ApiKeyService {
  constructor(
    private readonly prisma: PrismaClient,
    /** Told of each revocation, so no instance keeps trusting the key. */
    private readonly credentials?: CredentialCache,
  ) {}

  /**
   * The full key is returned here only; the database keeps its SHA-256 (256 random bits of secret).
   * `creator`: the grants of the credential asking (null: full); a key never gets more than that.
   */
  async create(clientId: string, input: unknown, creator: Permissions | null) {
    const parsed = parseInput(ApiKeyInput, input);
    const name = parsed?.name ?? null;
    const permissions: Permissions | null = parsed?.permissions ?? null;
    if (!includes(creator, permissions)) {
      throw new AppError("FORBIDDEN", "A restricted API key cannot create a key with permissions it does not have");
    }
    const prefix = `fpk_${randomBytes(6).toString("hex")}`;
    const key = `${prefix}.${randomBytes(32).toString("base64url")}`;
    const row = await inTransaction(this.prisma, async (tx) => {
      // Serialises the client's key creations, so the cap holds under concurrency.
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`api-keys:${clientId}`}))`;
      if ((await tx.apiKey.count({ where: { clientId, revokedAt: null } })) >= MAX_ACTIVE_KEYS) {
        throw badInput(`A client has at most ${MAX_ACTIVE_KEYS} active API keys: revoke one first`);
      }
      const created = await tx.apiKey.create({
        data: { clientId, prefix, hash: sha256(key).toString("hex"), name, permissions: permissions ?? Prisma.DbNull },
      });
      await recordEvent(prismaSql(tx), { clientId, type: "api_key.created", object: eventObject.apiKey(created) });
      return created;
    });
    return { id: row.id, key, prefix, createdAt: row.createdAt, name: row.name, permissions };
  }

  /** Every active key and the most recently revoked ones (at most MAX_LISTED_KEYS), oldest first. */
  async list(clientId: string) {
    const [active, revoked] = await Promise.all([
      this.prisma.apiKey.findMany({ where: { clientId, revokedAt: null } }),
      this.prisma.apiKey.findMany({ where: { clientId, revokedAt: { not: null } }, orderBy: [{ revokedAt: "desc" }, { id: "desc" }], take: LISTED_REVOKED_KEYS }),
    ]);
    return [...active, ...revoked].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id));
  }

  /** Idempotent: revoking a revoked key returns it unchanged. Another client's key is unknown. */
  async revoke(clientId: string, keyId: string) {
    const id = requireUuid(keyId, "keyId");
    const key = await this.prisma.apiKey.findFirst({ where: { id, clientId } });
    if (!key) throw notFound("API key");
    if (key.revokedAt) return key;
    const row = await this.prisma.$transaction(async (tx) => {
      const revoked = await tx.apiKey.updateMany({ where: { id, clientId, revokedAt: null }, data: { revokedAt: new Date() } });
      const revokedRow = await tx.apiKey.findUniqueOrThrow({ where: { id, clientId } });
      if (revoked.count) await recordEvent(prismaSql(tx), { clientId, type: "api_key.revoked", object: eventObject.apiKey(revokedRow) });
      return revokedRow;
    });
    this.credentials?.revoked(id);
    return row;
  }

  /** Resolves a presented key to its client, or null for a malformed, unknown or revoked key. */
  async authenticate(presented: string): Promise<{ clientId: string; apiKeyId: string; permissions: Permissions | null } | null> {
    const match = KEY_PATTERN.exec(presented);
    if (!match) return null;
    // Every authenticated request runs this: raw SQL costs half of a Prisma model query here (bench/README).
    const [key] = await this.prisma.$queryRaw<KeyRow[]>`
      SELECT "id", "clientId", "hash", "lastUsedAt", "revokedAt", "permissions" FROM "api_keys" WHERE "prefix" = ${match[1]}`;
    if (!key || key.revokedAt) return null;
    if (!timingSafeEqual(sha256(presented), Buffer.from(key.hash, "hex"))) return null;
    const now = new Date();
    if (!key.lastUsedAt || now.getTime() - key.lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS) {
      await this.prisma.apiKey.updateMany({
        where: { id: key.id, OR: [{ lastUsedAt: null }, { lastUsedAt: { lt: new Date(now.getTime() - LAST_USED_RESOLUTION_MS) } }] },
        data: { lastUsedAt: now },
      });
    }
    return { clientId: key.clientId, apiKeyId: key.id, permissions: storedPermissions(key.permissions) };
  }
}
