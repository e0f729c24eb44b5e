import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestServer } from "./support/server.js";
import { needs, REQUIREMENTS } from "./support/requirements.js";
import { rest, contractBody } from "./support/http.js";
import { startServerWithMailbox, type Mailbox } from "./support/mailbox.js";

let server: TestServer;
let mailbox: Mailbox;
beforeAll(async () => {
  ({ server, mailbox } = await startServerWithMailbox());
});
afterAll(() => server?.stop());

const DAY_S = 24 * 60 * 60;
const newEmail = () => `client-${crypto.randomUUID()}@example.com`;
const requestOtp = (email: string) => rest(server, "POST", "/v1/client-auth/otp", { body: { email } });
const verify = (email: string, otp: string) => rest(server, "POST", "/v1/client-auth/verify", { body: { email, otp } });
const wrongCode = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, "0");

/** A fresh code for the address, read from the mailbox. */
async function newCode(email: string): Promise<string> {
  const before = mailbox.mails.length;
  expect((await requestOtp(email)).status).toBe(200);
  for (let waited = 0; mailbox.mails.length === before && waited < 2000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
  return mailbox.codeFor(email);
}

async function guessWrong(email: string, code: string, times: number) {
  for (let i = 0; i < times; i++) expect((await verify(email, wrongCode(code))).status).toBe(401);
}

/** Moves the address's codes back in time, as if they had been sent `minutes` ago. */
const age = (email: string, minutes: number) =>
  server.app.db.prisma.otpCode.updateMany({ where: { email }, data: { createdAt: new Date(Date.now() - minutes * 60_000) } });

describe("OTP daily limits", () => {
  it("sends at most 10 codes per address in 24 hours: the 11th is 429 with a Retry-After of the rest of that day", async () => {
    const email = newEmail();
    for (let i = 0; i < 5; i++) expect((await requestOtp(email)).status).toBe(200);
    await age(email, 20);
    for (let i = 0; i < 5; i++) expect((await requestOtp(email)).status).toBe(200);
    const limited = await requestOtp(email);
    expect(limited.status).toBe(429);
    expect(contractBody(limited.body)).toEqual({ error: expect.stringMatching(/today/) });
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(DAY_S - 20 * 60 - 60);
    expect(retryAfter).toBeLessThanOrEqual(DAY_S - 20 * 60);
    expect((await requestOtp(newEmail())).status).toBe(200);
  });

  it("locks verification after 10 wrong codes in 24 hours, the right code included, until the oldest counted code leaves the window", async () => {
    const email = newEmail();
    await guessWrong(email, await newCode(email), 5);
    const second = await newCode(email);
    await guessWrong(email, second, 4);
    expect((await verify(email, second)).status).toBe(200); // 9 wrong guesses: still allowed
    await guessWrong(email, await newCode(email), 1);

    const right = await newCode(email);
    for (const otp of [right, wrongCode(right)]) {
      const locked = await verify(email, otp);
      expect(locked.status).toBe(429);
      expect(contractBody(locked.body)).toEqual({ error: expect.stringMatching(/Too many wrong codes for this e-mail: sign-in by code is locked until /) });
      expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(DAY_S - 60);
    }
    const other = newEmail();
    expect((await verify(other, await newCode(other))).status).toBe(200);

    await age(email, 24 * 60 + 1);
    expect((await verify(email, await newCode(email))).status).toBe(200);
  });

  // Concurrency only means something on PostgreSQL (the embedded database runs one statement at a time).
  it("counts wrong guesses that arrive together exactly: the lockout lets no extra one be checked", needs(REQUIREMENTS.postgres), async () => {
    const email = newEmail();
    await guessWrong(email, await newCode(email), 5);
    await guessWrong(email, await newCode(email), 4);
    const code = await newCode(email);
    const statuses = (await Promise.all(Array.from({ length: 4 }, () => verify(email, wrongCode(code))))).map((res) => res.status);
    expect(statuses.sort()).toEqual([401, 429, 429, 429]);
    const stored = await server.app.db.prisma.otpCode.findMany({ where: { email } });
    expect(stored.reduce((sum, otp) => sum + otp.attempts, 0)).toBe(10);
  });
});
