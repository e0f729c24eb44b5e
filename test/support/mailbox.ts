import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { startServer, type TestServer } from "./server.js";
import { rest } from "./http.js";

export type Mail = { to: string[]; raw: string };

/** A real SMTP server on a free loopback port that keeps every mail it receives. */
export type Mailbox = {
  smtpUrl: string;
  mails: Mail[];
  /** The 6-digit code of the latest mail to `email`, waiting briefly for it to arrive. */
  codeFor(email: string): Promise<string>;
  /** Makes the server refuse every mail from now on (a failing mail provider). */
  refuseMail(): void;
  close(): Promise<void>;
};

export async function startMailbox(): Promise<Mailbox> {
  const mails: Mail[] = [];
  let refusing = false;
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, session, done) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        if (refusing) return done(new Error("mailbox unavailable"));
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()), raw: Buffer.concat(chunks).toString("utf8") });
        done();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve));
  const { port } = smtp.server.address() as AddressInfo;

  return {
    smtpUrl: `smtp://127.0.0.1:${port}`,
    mails,
    async codeFor(email) {
      const wanted = email.toLowerCase();
      for (let waited = 0; waited < 2000; waited += 20) {
        const mail = mails.findLast((m) => m.to.includes(wanted));
        const body = mail?.raw.split(/\r?\n\r?\n/).slice(1).join("\n");
        const code = body && /\b(\d{6})\b/.exec(body)?.[1];
        if (code) return code;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error(`no sign-in code arrived for ${email}`);
    },
    refuseMail() {
      refusing = true;
    },
    close: () => new Promise<void>((resolve) => smtp.close(() => resolve())),
  };
}

/** A server that sends its mail to a fresh mailbox; stopping the server closes the mailbox too. */
export async function startServerWithMailbox(): Promise<{ server: TestServer; mailbox: Mailbox }> {
  const mailbox = await startMailbox();
  const server = await startServer({ env: { SMTP_URL: mailbox.smtpUrl } });
  const stop = async () => {
    await server.stop();
    await mailbox.close();
  };
  return { server: { ...server, stop }, mailbox };
}

export type Session = { token: string; clientId: string; headers: Record<string, string> };

/** The whole OTP sign-in over REST: request a code, read it from the mailbox, verify it. */
export async function signIn(server: TestServer, mailbox: Mailbox, email = `client-${crypto.randomUUID()}@example.com`): Promise<Session> {
  const requested = await rest(server, "POST", "/v1/client-auth/otp", { body: { email } });
  if (requested.status !== 200) throw new Error(`OTP request failed: ${requested.status} ${JSON.stringify(requested.body)}`);
  const otp = await mailbox.codeFor(email);
  const verified = await rest(server, "POST", "/v1/client-auth/verify", { body: { email, otp } });
  if (verified.status !== 200) throw new Error(`OTP verify failed: ${verified.status} ${JSON.stringify(verified.body)}`);
  return { token: verified.body.token, clientId: verified.body.client.id, headers: { "x-client-auth": verified.body.token } };
}
