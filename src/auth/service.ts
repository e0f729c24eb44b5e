import { createHmac, randomInt, randomUUID, timingSafeEqual } from "node:crypto";
import { z } from "zod";
import type { PrismaClient } from "../generated/prisma/client.js";
import { inTransaction, type Tx } from "../db/transaction.js";
import { AppError, unauthenticated } from "../errors.js";
import type { Logger } from "../logger.js";
import type { Mailer } from "../providers/mailer.js";
import { email, parseInput } from "../validation.js";
import { AddressAllowlist } from "../caller/allowed-ips.js";
import type { ApiKeyService } from "../keys/service.js";
import type { AuthenticatedClient } from "../caller/authenticated-client.js";
import type { CredentialCache } from "../caller/credential-cache.js";
import type { Credentials } from "../caller/credentials.js";
import { SessionTokens } from "./jwt.js";
import { isMode, MODE_HEADER, type Mode } from "../modes.js";
import { findOrCreateBusiness, tenantOf } from "../clients/service.js";
import { assertMayRequestCode, assertMayVerify, OTP_MAX_ATTEMPTS, OTP_TTL_MS, OTP_WINDOW_MS, type RecentCode } from "./otp-limits.js";

/** How a credential ended: revoked (an API key revoked, a session logged out) or past its end (an expiry, a rolled key's grace). */
export type CredentialEnd = "revoked" | "expired";

export const OtpRequest = z.object({
  email,
  name: z.string().trim().min(1, "name must not be empty").max(100, "name must be at most 100 characters").optional().nullable(),
});
export const OtpVerification = z.object({
  email,
  otp: z.string({ error: "otp is required" }).regex(/^\d{6}$/, "otp must be 6 digits"),
});

export class AuthService {
  private readonly tokens: SessionTokens;

  constructor(
    private readonly deps: {
      prisma: PrismaClient;
      keys: ApiKeyService;
      credentials: CredentialCache;
      mailer: Mailer;
      logger: Logger;
      secret: string;
      /** Test mode is on (SANDBOX): off, test credentials are refused. */
      sandbox: boolean;
      /** A session's request naming no mode acts in this one. */
      sessionMode: Mode;
    },
  ) {
    this.tokens = new SessionTokens(deps.secret);
  }

  /** Same answer for every well-formed address, known or not: no account enumeration. */
  async requestOtp(input: unknown) {
    const { email, name } = parseInput(OtpRequest, input);
    const code = randomInt(0, 1_000_000).toString().padStart(6, "0");
    const expiresAt = new Date(Date.now() + OTP_TTL_MS);
    // Count and insert under the address's lock, so requests arriving together cannot pass the limits.
    const otp = await inTransaction(this.deps.prisma, async (tx) => {
      assertMayRequestCode(await this.lockAddress(tx, email), Date.now());
      return tx.otpCode.create({ data: { email, name: name ?? null, codeHash: this.hashCode(email, code), expiresAt } });
    });
    try {
      await this.deps.mailer.send({
        to: email,
        subject: "Your sign-in code",
        text: `Your sign-in code is ${code}. It expires in 10 minutes. If you did not ask for it, ignore this mail.`,
      });
    } catch (err) {
      // A code that never left does not count against the address's allowance.
      await this.deps.prisma.otpCode.delete({ where: { id: otp.id } });
      throw err;
    }
    return { message: "If the address can receive mail, a sign-in code has been sent", expiresAt };
  }

  /** The first successful verification of an unknown address creates the client (sign-up). */
  async verifyOtp(input: unknown) {
    const { email, otp } = parseInput(OtpVerification, input);
    const rejected = () => unauthenticated("Invalid or expired code");
    // Under the address's lock: refused while it is locked out, else the guess takes one try of the
    // newest pending code before it is compared (conditional update: however many guesses arrive
    // together, at most OTP_MAX_ATTEMPTS per code and the lockout's count overall are ever checked).
    const pending = await inTransaction(this.deps.prisma, async (tx) => {
      assertMayVerify(await this.lockAddress(tx, email), Date.now());
      const newest = await tx.otpCode.findFirst({
        where: { email, consumedAt: null, expiresAt: { gt: new Date() } },
        orderBy: { createdAt: "desc" },
      });
      if (!newest) return null;
      const tried = await tx.otpCode.updateMany({
        where: { id: newest.id, consumedAt: null, attempts: { lt: OTP_MAX_ATTEMPTS } },
        data: { attempts: { increment: 1 } },
      });
      return tried.count === 1 ? newest : null;
    });
    if (!pending) throw rejected();
    const matches = timingSafeEqual(Buffer.from(pending.codeHash, "hex"), Buffer.from(this.hashCode(email, otp), "hex"));
    if (!matches) throw rejected();
    // Conditional update: of two concurrent verifications with the right code, only one wins.
    const consumed = await this.deps.prisma.otpCode.updateMany({
      where: { id: pending.id, consumedAt: null },
      data: { consumedAt: new Date() },
    });
    if (consumed.count !== 1) throw rejected();
    // The session signs in as the business (its test tenant's id); each request names its mode.
    const { test: client } = await findOrCreateBusiness(this.deps.prisma, { email, name: pending.name });
    const sessionId = randomUUID();
    const { token, expiresAt } = await this.tokens.sign(client.id, sessionId);
    await this.deps.prisma.session.create({ data: { id: sessionId, clientId: client.id, expiresAt } });
    return { token, expiresAt, client };
  }

  /**
   * Resolves credentials, presented from the client address `ip` (as TRUST_PROXY reads it), to a
   * client. The JWT wins when both are present, and a bad JWT is refused even next to a good key. A
   * key with an allowlist presented from elsewhere is FORBIDDEN: every transport authenticates here,
   * before anything else runs for the caller.
   */
  async authenticate(credentials: Credentials, ip: string): Promise<AuthenticatedClient> {
    const credential = await this.resolve(credentials);
    if (credential.allowedIps && !credential.allowedIps.allows(ip)) throw new AppError("FORBIDDEN", "This API key may not be used from this address");
    if (credential.mode === "test" && !this.deps.sandbox) {
      throw new AppError("TEST_MODE_DISABLED", "Test mode is off on this server (SANDBOX=false): use a live API key, or x-mode: live with a session");
    }
    return credential;
  }

  private async resolve({ jwt, apiKey, mode: named }: Credentials): Promise<AuthenticatedClient> {
    if (named !== undefined && !isMode(named)) throw new AppError("BAD_USER_INPUT", `${MODE_HEADER} must be test or live`, { param: MODE_HEADER });
    if (jwt) {
      const mode = named ?? this.deps.sessionMode;
      return this.deps.credentials.remember(`jwt:${mode}:${jwt}`, () => this.verifySession(jwt, mode));
    }
    if (!apiKey) throw unauthenticated("Missing credentials: send x-api-key or x-client-auth");
    const credential = await this.deps.credentials.remember(`key:${apiKey}`, () => this.verifyApiKey(apiKey));
    if (named !== undefined && named !== credential.mode) {
      throw new AppError("FORBIDDEN", `This API key acts in ${credential.mode} mode only; ${MODE_HEADER} names ${named}`, { param: MODE_HEADER });
    }
    return credential;
  }

  private async verifySession(jwt: string, mode: Mode): Promise<AuthenticatedClient> {
    const claims = await this.tokens.verify(jwt);
    if (!claims) throw unauthenticated("Invalid or expired token");
    const session = await this.deps.prisma.session.findUnique({ where: { id: claims.sessionId }, include: { client: true } });
    if (!session || session.revokedAt || session.clientId !== claims.clientId || session.expiresAt <= new Date()) {
      throw unauthenticated("Invalid or expired token");
    }
    const tenant = await tenantOf(this.deps.prisma, session.client, mode);
    return { clientId: tenant.id, mode, accountId: tenant.accountId, method: "JWT", credentialId: session.id, expiresAt: session.expiresAt, permissions: null };
  }

  private async verifyApiKey(apiKey: string): Promise<AuthenticatedClient> {
    const key = await this.deps.keys.authenticate(apiKey);
    if (!key) throw unauthenticated("Invalid, revoked or expired API key");
    return {
      clientId: key.clientId,
      mode: key.mode,
      accountId: key.accountId,
      method: "API_KEY",
      credentialId: key.apiKeyId,
      expiresAt: key.expiresAt ?? undefined,
      allowedIps: key.allowedIps.length > 0 ? new AddressAllowlist(key.allowedIps) : undefined,
      permissions: key.permissions,
    };
  }

  /**
   * Of the given credential ids (API keys and sessions), those revoked, logged out or expired by now
   * (a key rolled since it was watched included), each with how it ended.
   */
  async endedCredentials(ids: string[]): Promise<Map<string, CredentialEnd>> {
    const now = new Date();
    const ended = { where: { id: { in: ids }, OR: [{ revokedAt: { not: null } }, { expiresAt: { lte: now } }] }, select: { id: true, revokedAt: true } };
    const [keys, sessions] = await Promise.all([this.deps.prisma.apiKey.findMany(ended), this.deps.prisma.session.findMany(ended)]);
    return new Map([...keys, ...sessions].map((row) => [row.id, row.revokedAt ? "revoked" : "expired"]));
  }

  /** `status` and `logout` are about the session token itself, so they need the JWT. */
  async status(auth: AuthenticatedClient) {
    const session = this.requireSession(auth);
    const client = await this.deps.prisma.client.findUniqueOrThrow({ where: { id: auth.clientId } });
    return { authenticated: true, client, expiresAt: session.expiresAt };
  }

  async logout(auth: AuthenticatedClient) {
    const session = this.requireSession(auth);
    await this.deps.prisma.session.updateMany({ where: { id: session.id, revokedAt: null }, data: { revokedAt: new Date() } });
    this.deps.credentials.revoked(session.id);
    return { success: true };
  }

  private requireSession(auth: AuthenticatedClient) {
    if (auth.method !== "JWT" || !auth.expiresAt) throw unauthenticated("This operation needs a session token in x-client-auth");
    return { id: auth.credentialId, expiresAt: auth.expiresAt };
  }

  /** Serialises everything about one address's codes; returns its codes of the last OTP_WINDOW_MS, oldest first. */
  private async lockAddress(tx: Tx, email: string): Promise<RecentCode[]> {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`otp:${email}`}))`;
    return tx.otpCode.findMany({
      where: { email, createdAt: { gt: new Date(Date.now() - OTP_WINDOW_MS) } },
      select: { createdAt: true, attempts: true, consumedAt: true },
      orderBy: { createdAt: "asc" },
    });
  }

  private hashCode(email: string, code: string): string {
    return createHmac("sha256", this.deps.secret).update(`otp:${email}:${code}`).digest("hex");
  }
}
