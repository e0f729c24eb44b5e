import { AppError } from "../errors.js";

/** A code is valid this long, and takes at most OTP_MAX_ATTEMPTS guesses before it is burnt. */
export const OTP_TTL_MS = 10 * 60_000;
export const OTP_MAX_ATTEMPTS = 5;
/** Codes one address may be sent in OTP_TTL_MS. */
const OTP_REQUESTS_PER_TTL = 5;
/** The rolling window of the daily limits below. */
export const OTP_WINDOW_MS = 24 * 60 * 60_000;
/** Codes one address may be sent in OTP_WINDOW_MS. */
const OTP_REQUESTS_PER_WINDOW = 10;
/** Wrong guesses, over all its codes, after which an address cannot verify any code for the rest of OTP_WINDOW_MS. */
const OTP_FAILURES_PER_WINDOW = 10;

/** An address's code as the limits see it: when it was sent and how its tries went. */
export type RecentCode = { createdAt: Date; attempts: number; consumedAt: Date | null };

const rateLimited = (message: string, untilMs: number, nowMs: number) =>
  new AppError("RATE_LIMITED", message, { retryAfter: Math.max(1, Math.ceil((untilMs - nowMs) / 1000)) });

/** Every try is counted before it is compared, so a try that did not consume its code was wrong (or is still being checked). */
const failuresOf = (code: RecentCode) => code.attempts - (code.consumedAt ? 1 : 0);

/**
 * Refuses another code for an address whose codes of the last OTP_WINDOW_MS (`recent`, oldest first)
 * reach either request limit; Retry-After says when the oldest counted code stops counting.
 */
export function assertMayRequestCode(recent: RecentCode[], nowMs: number): void {
  // The daily limit first: when both apply, its Retry-After is the later one.
  if (recent.length >= OTP_REQUESTS_PER_WINDOW) {
    throw rateLimited("Too many codes requested for this e-mail today; try again later", recent[recent.length - OTP_REQUESTS_PER_WINDOW].createdAt.getTime() + OTP_WINDOW_MS, nowMs);
  }
  const lastTtl = recent.filter((code) => code.createdAt.getTime() > nowMs - OTP_TTL_MS);
  if (lastTtl.length >= OTP_REQUESTS_PER_TTL) {
    throw rateLimited("Too many codes requested for this e-mail; try again later", lastTtl[lastTtl.length - OTP_REQUESTS_PER_TTL].createdAt.getTime() + OTP_TTL_MS, nowMs);
  }
}

/**
 * Refuses every verification, the right code included, while the address's wrong guesses over its
 * codes of the last OTP_WINDOW_MS (`recent`, oldest first) reach OTP_FAILURES_PER_WINDOW; the lockout
 * ends when enough of the oldest of those codes leave the window.
 */
export function assertMayVerify(recent: RecentCode[], nowMs: number): void {
  let failures = recent.reduce((sum, code) => sum + failuresOf(code), 0);
  if (failures < OTP_FAILURES_PER_WINDOW) return;
  const leaving = recent.find((code) => (failures -= failuresOf(code)) < OTP_FAILURES_PER_WINDOW)!;
  const until = leaving.createdAt.getTime() + OTP_WINDOW_MS;
  throw rateLimited(`Too many wrong codes for this e-mail: sign-in by code is locked until ${new Date(until).toISOString()}`, until, nowMs);
}
