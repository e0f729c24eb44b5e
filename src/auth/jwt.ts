import { SignJWT, jwtVerify, errors } from "jose";

export const SESSION_TTL_SECONDS = 60 * 60;
const ALGORITHM = "HS256";

export type SessionClaims = { clientId: string; sessionId: string; expiresAt: Date };

export class SessionTokens {
  private readonly key: Uint8Array;

  constructor(secret: string) {
    this.key = new TextEncoder().encode(secret);
  }

  async sign(clientId: string, sessionId: string, now = new Date()): Promise<{ token: string; expiresAt: Date }> {
    const issuedAt = Math.floor(now.getTime() / 1000);
    const expiresAt = new Date((issuedAt + SESSION_TTL_SECONDS) * 1000);
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: ALGORITHM, typ: "JWT" })
      .setSubject(clientId)
      .setJti(sessionId)
      .setIssuedAt(issuedAt)
      .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
      .sign(this.key);
    return { token, expiresAt };
  }

  /** Returns the claims, or null for any token that is malformed, expired, unsigned or signed otherwise. */
  async verify(token: string): Promise<SessionClaims | null> {
    try {
      const { payload } = await jwtVerify(token, this.key, { algorithms: [ALGORITHM], requiredClaims: ["sub", "jti", "exp", "iat"] });
      return { clientId: payload.sub!, sessionId: payload.jti!, expiresAt: new Date(payload.exp! * 1000) };
    } catch (err) {
      if (err instanceof errors.JOSEError || err instanceof TypeError) return null;
      throw err;
    }
  }
}
