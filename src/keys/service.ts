import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { z } from "zod";
import { Prisma, type ApiKey, type PrismaClient } from "../generated/prisma/client.js";
import { AppError, badInput, notFound } from "../errors.js";
import { PermissionsInput, storedPermissions, type Permissions } from "../caller/permissions.js";
import { auditTarget, auditUnchanged } from "../db/audit-scope.js";
import { recordEvent } from "../events/log.js";
import { apiKeyObject } from "./representation.js";
import { parseInput, requireUuid } from "../validation.js";
import type { CredentialCache } from "../caller/credential-cache.js";
import { prismaSql } from "../db/sql.js";
import { inTransaction, type Tx } from "../db/transaction.js";
import { normaliseAllowedIps } from "../caller/allowed-ips.js";
import { assertWithin, type KeyAuthority } from "./authority.js";
import { LastUseRecorder } from "./last-use.js";
import { isMode, modeOf, rememberMode, type Mode } from "../modes.js";

/** `fpk_test_…` / `fpk_live_…`; keys made before modes (`fpk_` and 12 hex digits) belong to test tenants. */
const KEY_PATTERN = /^(fpk_(?:(?:test|live)_)?[0-9a-f]{12})\.([A-Za-z0-9_-]{43})$/;

type KeyRow = { id: string; clientId: string; mode: string; accountId: string; hash: string; lastUsedAt: Date | null; revokedAt: Date | null; expiresAt: Date | null; allowedIps: string[] | null; permissions: unknown };

const sha256 = (text: string) => createHash("sha256").update(text).digest();
const HOUR_MS = 3_600_000;

/** Keys neither revoked nor expired that one client may hold. */
export const MAX_ACTIVE_KEYS = 100;
/** Ended (revoked or expired) keys the list shows: the most recently ended. */
const LISTED_ENDED_KEYS = 100;
/** The most keys the list returns. */
export const MAX_LISTED_KEYS = MAX_ACTIVE_KEYS + LISTED_ENDED_KEYS;
/** How long a rolled key may keep working (Stripe's limit: 7 days). */
export const MAX_ROLL_GRACE_HOURS = 168;
/** The longest lifetime a key created to expire may be given (a year); without expiresInHours it never expires. */
export const MAX_KEY_LIFETIME_HOURS = 8760;

const hours = (min: "gt0" | "ge0", max: number) => {
  const message = `expiresInHours must be a number of hours ${min === "gt0" ? "greater than 0" : "from 0"} ${min === "gt0" ? "and at most" : "to"} ${max}`;
  const base = z.number({ error: message }).max(max, message);
  return (min === "gt0" ? base.gt(0, message) : base.min(0, message)).nullish();
};

/** What a key may be created with besides its secret. */
export const CreateKeyInput = z.object({
  name: z.string().trim().min(1, "name must not be empty").max(100, "name must be at most 100 characters").nullish(),
  permissions: PermissionsInput.nullish(),
  expiresInHours: hours("gt0", MAX_KEY_LIFETIME_HOURS).describe(
    `hours (fractions allowed) until the key stops working, at most ${MAX_KEY_LIFETIME_HOURS}; omitted or null: never, or when the creating key expires (a key that expires cannot create one that outlives it)`,
  ),
  allowedIps: z
    .array(z.string())
    .nullish()
    .describe(`IPv4/IPv6 addresses or CIDR ranges the key may be used from (1 to 20); omitted or null: anywhere, or the creating key's own (a key with an allowlist can only create keys within it)`),
});
export const RollKeyInput = z.object({
  expiresInHours: hours("ge0", MAX_ROLL_GRACE_HOURS).describe(`hours (fractions allowed) the old key keeps working, 0 to ${MAX_ROLL_GRACE_HOURS}; default 0: it stops at once`),
});

/**
 * What a rolled key passes on to its successor: everything that says what the key may do and from
 * where (its secret and its lifetime are its own). The one place to add a key attribute that a roll keeps.
 */
const inheritedAttributes = (key: Pick<ApiKey, "allowedIps" | "name" | "permissions">) => ({
  allowedIps: key.allowedIps,
  name: key.name,
  permissions: storedPermissions(key.permissions),
});

type KeyAttributes = ReturnType<typeof inheritedAttributes> & { expiresAt: Date | null };

export class ApiKeyService {
  constructor(
    private readonly prisma: PrismaClient,
    /** Told of each revocation or roll, so no instance keeps trusting the key as it was. */
    private readonly credentials?: CredentialCache,
    private readonly lastUse = new LastUseRecorder({ prisma }),
  ) {}

  /**
   * The full key is returned here only; the database keeps its SHA-256 (256 random bits of secret).
   * `creator`: what the asking credential holds. The new key gets no more: without an allowlist or an
   * expiry of its own it inherits the creator's, and asking beyond them is a 403.
   */
  async create(clientId: string, input: unknown, creator: KeyAuthority) {
    const { name, permissions, expiresInHours, allowedIps } = parseInput(CreateKeyInput, input ?? {});
    const requestedIps = normaliseAllowedIps(allowedIps);
    const attributes = {
      name: name ?? null,
      permissions: permissions ?? null,
      allowedIps: requestedIps.length ? requestedIps : [...(creator.allowedIps?.entries ?? [])],
      expiresAt: expiresInHours ? new Date(Date.now() + Math.round(expiresInHours * HOUR_MS)) : creator.expiresAt,
    };
    assertWithin(creator, attributes, "create");
    return inTransaction(this.prisma, async (tx) => {
      await this.lockClientKeys(tx, clientId);
      return this.insert(tx, clientId, attributes);
    });
  }

  /**
   * A new key with the same attributes; the old one keeps working for `expiresInHours` (0: it stops
   * at once). Rolling a key that is already expiring is allowed and can only bring its end forward.
   * A revoked or expired key cannot be rolled (409); another client's key is unknown (404). Rolling
   * is creating: `creator` may roll only a key within what it holds, and an expiring creator's
   * successor ends when the creator does (otherwise the successor never expires).
   */
  async roll(clientId: string, keyId: string, input: unknown, creator: KeyAuthority) {
    const id = requireUuid(keyId, "keyId");
    const { expiresInHours } = parseInput(RollKeyInput, input ?? {});
    const created = await inTransaction(this.prisma, async (tx) => {
      await this.lockClientKeys(tx, clientId);
      const rolled = await tx.apiKey.findFirst({ where: { id, clientId } });
      if (rolled) assertWithin(creator, { ...rolled, permissions: storedPermissions(rolled.permissions) }, "roll");
      const now = new Date();
      const until = new Date(now.getTime() + Math.round((expiresInHours ?? 0) * HOUR_MS));
      const [old] = await tx.$queryRaw<ApiKey[]>`
        UPDATE "api_keys" SET "expiresAt" = LEAST(COALESCE("expiresAt", ${until}), ${until})
        WHERE "id" = ${id}::uuid AND "clientId" = ${clientId}::uuid AND "revokedAt" IS NULL AND ("expiresAt" IS NULL OR "expiresAt" > ${now})
        RETURNING *`;
      if (!old) {
        const key = await tx.apiKey.findFirst({ where: { id, clientId } });
        if (!key) throw notFound("API key");
        throw new AppError("CONFLICT", `API key ${id} is ${key.revokedAt ? "revoked" : "expired"} and cannot be rolled`);
      }
      const successor = await this.insert(tx, clientId, { ...inheritedAttributes(old), expiresAt: creator.expiresAt });
      auditTarget(old.id);
      await recordEvent(prismaSql(tx), { clientId, type: "api_key.rolled", object: apiKeyObject(old) });
      return successor;
    });
    this.credentials?.revoked(id);
    return created;
  }

  /** Every active key and the most recently ended ones (at most MAX_LISTED_KEYS), oldest first. */
  async list(clientId: string) {
    const now = new Date();
    const [active, revoked, expired] = await Promise.all([
      this.prisma.apiKey.findMany({ where: { clientId, revokedAt: null, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] } }),
      this.prisma.apiKey.findMany({ where: { clientId, revokedAt: { not: null } }, orderBy: [{ revokedAt: "desc" }, { id: "desc" }], take: LISTED_ENDED_KEYS }),
      this.prisma.apiKey.findMany({ where: { clientId, revokedAt: null, expiresAt: { lte: now } }, orderBy: [{ expiresAt: "desc" }, { id: "desc" }], take: LISTED_ENDED_KEYS }),
    ]);
    const endedAt = (key: ApiKey) => (key.revokedAt ?? key.expiresAt ?? now).getTime();
    const ended = [...revoked, ...expired].sort((a, b) => endedAt(b) - endedAt(a)).slice(0, LISTED_ENDED_KEYS);
    return [...active, ...ended].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id));
  }

  /**
   * Idempotent: revoking a revoked key returns it unchanged (audited with no target). Another client's
   * key is unknown. `revoker` may revoke only a key within what it holds (a restricted key cannot lock
   * its owner out).
   */
  async revoke(clientId: string, keyId: string, revoker: KeyAuthority) {
    const id = requireUuid(keyId, "keyId");
    const key = await this.prisma.apiKey.findFirst({ where: { id, clientId } });
    if (!key) throw notFound("API key");
    assertWithin(revoker, { ...key, permissions: storedPermissions(key.permissions) }, "revoke");
    if (key.revokedAt) {
      auditUnchanged();
      return key;
    }
    const row = await this.prisma.$transaction(async (tx) => {
      const revoked = await tx.apiKey.updateMany({ where: { id, clientId, revokedAt: null }, data: { revokedAt: new Date() } });
      const revokedRow = await tx.apiKey.findUniqueOrThrow({ where: { id, clientId } });
      if (revoked.count) await recordEvent(prismaSql(tx), { clientId, type: "api_key.revoked", object: apiKeyObject(revokedRow) });
      else auditUnchanged(); // revoked meanwhile, by another request
      return revokedRow;
    });
    this.credentials?.revoked(id);
    return row;
  }

  /**
   * Resolves a presented key to its client, its end and its allowlist, or null for a malformed,
   * unknown, revoked or expired key. A use is noted for lastUsedAt and written later, never here.
   */
  async authenticate(
    presented: string,
  ): Promise<{ clientId: string; mode: Mode; accountId: string; apiKeyId: string; expiresAt: Date | null; allowedIps: string[]; permissions: Permissions | null } | null> {
    const match = KEY_PATTERN.exec(presented);
    if (!match) return null;
    // Every authenticated request runs this: raw SQL costs half of a Prisma model query here (bench/README).
    const [key] = await this.prisma.$queryRaw<KeyRow[]>`
      SELECT k."id", k."clientId", c."mode", c."accountId", k."hash", k."lastUsedAt", k."revokedAt", k."expiresAt", k."allowedIps", k."permissions"
      FROM "api_keys" k JOIN "clients" c ON c."id" = k."clientId" WHERE k."prefix" = ${match[1]}`;
    const now = new Date();
    if (!key || key.revokedAt || (key.expiresAt && key.expiresAt <= now) || !isMode(key.mode)) return null;
    if (!timingSafeEqual(sha256(presented), Buffer.from(key.hash, "hex"))) return null;
    if (LastUseRecorder.isDue(key.lastUsedAt, now)) this.lastUse.note(key.id, now);
    rememberMode(key.clientId, key.mode);
    return { clientId: key.clientId, mode: key.mode, accountId: key.accountId, apiKeyId: key.id, expiresAt: key.expiresAt, allowedIps: key.allowedIps ?? [], permissions: storedPermissions(key.permissions) };
  }

  /** Writes the uses noted but not yet written. */
  close() {
    return this.lastUse.flush();
  }

  /** Serialises the client's key creations, so the cap holds under concurrency. */
  private async lockClientKeys(tx: Tx, clientId: string) {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`api-keys:${clientId}`}))`;
  }

  private async insert(tx: Tx, clientId: string, { permissions, ...attributes }: KeyAttributes) {
    const now = new Date();
    const active = await tx.apiKey.count({ where: { clientId, revokedAt: null, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] } });
    if (active >= MAX_ACTIVE_KEYS) throw badInput(`A client has at most ${MAX_ACTIVE_KEYS} active API keys: revoke one first`);
    const prefix = `fpk_${await modeOf(prismaSql(tx), clientId)}_${randomBytes(6).toString("hex")}`;
    const key = `${prefix}.${randomBytes(32).toString("base64url")}`;
    const { hash: _hash, ...row } = await tx.apiKey.create({ data: { clientId, prefix, hash: sha256(key).toString("hex"), ...attributes, permissions: permissions ?? Prisma.DbNull } });
    await recordEvent(prismaSql(tx), { clientId, type: "api_key.created", object: apiKeyObject(row) });
    return { ...row, key };
  }
}
