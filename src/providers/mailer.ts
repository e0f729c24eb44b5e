import { setTimeout as sleep } from "node:timers/promises";
import nodemailer from "nodemailer";
import type { Logger } from "../logger.js";

export type Mail = { to: string; subject: string; text: string };

/** Where mail goes now: to the log (no SMTP_URL), or to an SMTP server that answers or does not. */
export type MailerState = "log" | "ok" | "unreachable";

export interface Mailer {
  send(mail: Mail): Promise<void>;
  /** The SMTP server's answer to a greeting (nodemailer `verify`), remembered for a few seconds. */
  state(): Promise<MailerState>;
  close(): void;
}

/** A server that has not greeted by then counts as unreachable (a probe must not hang). */
const VERIFY_TIMEOUT_MS = 3000;
/** Probes come every few seconds: one greeting serves them all for this long. */
const STATE_TTL_MS = 10_000;

/** SMTP through SMTP_URL; without it, the mail (sign-in code included) is written to the log instead. */
export function createMailer(options: { smtpUrl?: string; from: string; logger: Logger }): Mailer {
  if (!options.smtpUrl) {
    return {
      async send(mail) {
        options.logger.info({ mail: { to: mail.to, subject: mail.subject, body: mail.text } }, "mail (SMTP_URL unset, not sent)");
      },
      state: async () => "log",
      close() {},
    };
  }
  const transport = nodemailer.createTransport(options.smtpUrl);
  const verify = (): Promise<MailerState> =>
    Promise.race([
      transport.verify().then(
        (): MailerState => "ok",
        (): MailerState => "unreachable",
      ),
      sleep(VERIFY_TIMEOUT_MS, "unreachable" as const, { ref: false }),
    ]);
  let checked: { at: number; state: Promise<MailerState> } | undefined;
  return {
    async send(mail) {
      await transport.sendMail({ from: options.from, ...mail });
    },
    state() {
      if (!checked || Date.now() - checked.at > STATE_TTL_MS) checked = { at: Date.now(), state: verify() };
      return checked.state;
    },
    close() {
      transport.close();
    },
  };
}
