import nodemailer from "nodemailer";
import type { Logger } from "../logger.js";

export type Mail = { to: string; subject: string; text: string };

export interface Mailer {
  send(mail: Mail): Promise<void>;
  close(): void;
}

/** SMTP through SMTP_URL; without it, the mail (sign-in code included) is written to the log instead. */
export function createMailer(options: { smtpUrl?: string; from: string; logger: Logger }): Mailer {
  if (!options.smtpUrl) {
    return {
      async send(mail) {
        options.logger.info({ mail: { to: mail.to, subject: mail.subject, body: mail.text } }, "mail (SMTP_URL unset, not sent)");
      },
      close() {},
    };
  }
  const transport = nodemailer.createTransport(options.smtpUrl);
  return {
    async send(mail) {
      await transport.sendMail({ from: options.from, ...mail });
    },
    close() {
      transport.close();
    },
  };
}
